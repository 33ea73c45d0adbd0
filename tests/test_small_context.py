"""A model with a small context still chats: the reply's room shrinks to fit the prompt.

`minillm train --preset tiny` makes a byte-level model of 64 positions, whose chat tags
alone take 33 ids; keeping a quarter of the context (or `max_tokens`) for the reply left no
room for the user's message at all.
"""

from __future__ import annotations

import numpy as np
import pytest

from framework.model import GPTModel
from framework.serving import MIN_TEXT, ChatEngine, ReplySettings
from framework.tokenizer import ByteTokenizer
from grader.product.data import MODEL_CONFIGS


@pytest.fixture(scope="module")
def tiny() -> ChatEngine:
    np.random.seed(0)
    return ChatEngine(GPTModel(MODEL_CONFIGS["tiny"]()), ByteTokenizer())


@pytest.mark.parametrize("max_tokens", [None, 64, 31])
def test_a_tiny_model_answers_within_its_context(tiny: ChatEngine, max_tokens: int | None) -> None:
    reply = tiny.reply("", [("user", "3 + 4 = ?")], ReplySettings(max_tokens=max_tokens, seed=1))
    ids = tiny.prompt_ids("", [("user", "3 + 4 = ?")], max_tokens)
    assert len(ids) + reply.completion_tokens <= tiny.context
    assert reply.completion_tokens >= 1


def test_the_newest_message_keeps_some_of_its_text(tiny: ChatEngine) -> None:
    bare = len(tiny.prompt_ids("", [("user", "")], 64))
    long = len(tiny.prompt_ids("", [("user", "x" * 200)], 64))
    assert long - bare >= MIN_TEXT


def test_a_large_context_keeps_the_reply_room_asked_for() -> None:
    engine = ChatEngine(GPTModel(MODEL_CONFIGS["default"]()), ByteTokenizer())
    ids = engine.prompt_ids("", [("user", "y" * 500)], 40)
    assert len(ids) == engine.context - 40
