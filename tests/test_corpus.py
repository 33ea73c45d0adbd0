"""framework.corpus and framework.phrasebook: deterministic, split, held out, in chat format."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest

from framework.chat import format_chat_prompt
from framework.corpus import (
    Corpus,
    Dialogue,
    arithmetic_answer,
    build_corpus,
    encode_dialogues,
)
from framework.phrasebook import ask_sum, number_en, number_zh
from framework.tokenizer import BOS_ID, ByteTokenizer

ANSWER = re.compile(r"^(\d+) ([+-]) (\d+) = (\d+)$")


@cache
def corpus() -> Corpus:
    return build_corpus(seed=0, num_dialogues=4000)


def test_same_seed_same_corpus_other_seed_other_corpus() -> None:
    a, b = build_corpus(seed=3, num_dialogues=300), build_corpus(seed=3, num_dialogues=300)
    assert a == b
    assert build_corpus(seed=4, num_dialogues=300).train != a.train


def test_every_dialogue_is_in_chat_format() -> None:
    tag = re.compile(r"<\|(system|user|assistant|end)\|>")
    for d in corpus().train[:500] + corpus().val:
        text = d.text
        assert text.startswith(("<|user|>\n", "<|system|>\n")) and text.endswith("<|end|>\n")
        tags = [m.group(1) for m in tag.finditer(text)]
        assert tags[-4:] == ["user", "end", "assistant", "end"]
        for role, content in d.messages:
            assert f"<|{role}|>\n{content}\n<|end|>\n" in text and "<|" not in content


def test_text_is_the_chat_training_layout() -> None:
    d = Dialogue((("system", "S"), ("user", "U"), ("assistant", "A")), "greeting")
    assert d.text == "<|system|>\nS\n<|end|>\n<|user|>\nU\n<|end|>\n<|assistant|>\nA\n<|end|>\n"
    prompt = format_chat_prompt(d.messages[:-1])
    assert d.text.startswith(prompt)  # what a chat feeds the model is what it trained on


def test_arithmetic_answers_are_canonical_and_right() -> None:
    kinds = {d.kind for d in corpus().train}
    assert kinds == {"arithmetic", "greeting", "fact"}
    for d in corpus().train:
        if d.kind == "arithmetic":
            m = ANSWER.match(d.messages[-1][1])
            assert m, d.messages[-1][1]
            a, op, b, c = int(m[1]), m[2], int(m[3]), int(m[4])
            assert c == (a + b if op == "+" else a - b) and 0 <= a <= 20 and 0 <= b <= 20
            assert c >= 0


def test_unseen_sums_never_occur_in_train_or_val() -> None:
    c = corpus()
    assert len(c.heldout_sums) == round(0.05 * (21 * 21 + 21 * 22 // 2))
    answers = {d.messages[-1][1] for d in c.train + c.val}
    for a, op, b in c.heldout_sums:
        assert arithmetic_answer(a, op, b) not in answers
    assert {(q.a, q.op, q.b) for q in c.unseen} == set(c.heldout_sums)
    assert sorted(q.lang for q in c.unseen) == sorted(["en", "zh"] * 34)
    for q in c.unseen + c.heldout:
        assert q.answer == arithmetic_answer(q.a, q.op, q.b)


def test_heldout_questions_use_a_phrasing_never_used_for_their_sum() -> None:
    c = corpus()
    assert len(c.heldout) == 200 and {q.lang for q in c.heldout} == {"en", "zh"}
    asked = {d.messages[-2][1] for d in c.train + c.val}
    answers = {d.messages[-1][1] for d in c.train + c.val}
    for q in c.heldout:
        assert (q.a, q.op, q.b) not in c.heldout_sums
        assert q.prompt not in asked
    assert sum(q.answer in answers for q in c.heldout) > 150  # the sums are known


def test_train_and_val_texts_are_disjoint() -> None:
    c = corpus()
    train, val = {d.text for d in c.train}, {d.text for d in c.val}
    assert val and not train & val
    assert len(c.train) + len(c.val) == 4000


def test_both_languages_symbols_and_words_occur() -> None:
    asks = [d.messages[-2][1] for d in corpus().train if d.kind == "arithmetic"]
    for pattern in (r"\d\+\d", r" plus ", r"加", r"minus|take away|subtract", r"减",
                    r"^[零一二三四五六七八九十两]+[加减]", r"(?i)^what"):  # fmt: skip
        assert any(re.search(pattern, q) for q in asks), pattern


def test_number_words() -> None:
    assert [number_en(n) for n in (0, 13, 20, 45)] == ["zero", "thirteen", "twenty", "forty-five"]
    assert [number_zh(n) for n in (0, 7, 10, 15, 20, 99)] == ["零", "七", "十", "十五", "二十",
                                                            "九十九"]  # fmt: skip
    with pytest.raises(ValueError):
        number_en(100)


def test_ask_sum_mentions_both_operands() -> None:
    rng = np.random.default_rng(1)
    for _ in range(200):
        q = ask_sum(rng, 17, "+", 3, "en")
        assert ("17" in q or "seventeen" in q.lower()) and ("3" in q or "three" in q.lower())


def test_encode_dialogues_starts_each_with_bos() -> None:
    d = Dialogue((("user", "hi"), ("assistant", "Hello!")), "greeting")
    ids = encode_dialogues([d, d], ByteTokenizer())
    n = len(d.text.encode())
    assert ids.dtype == np.int32 and len(ids) == 2 * (n + 1)
    assert ids[0] == ids[n + 1] == BOS_ID
    assert ByteTokenizer().decode(ids.tolist()) == d.text * 2


@pytest.mark.parametrize(
    "kwargs", [{"val_fraction": 1.0}, {"unseen_fraction": -0.1}, {"num_dialogues": 0},
               {"mix": (1.0, -1.0, 0.0)}]
)  # fmt: skip
def test_bad_arguments_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        build_corpus(**kwargs)  # type: ignore[arg-type]
