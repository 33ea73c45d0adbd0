"""A chat engine whose every step a lab covers runs the student's code.

`MineEngine` is the framework's `ChatEngine` (the same context budget, the same trimming
of old turns, the same stop rules and streaming), with its pieces swapped:

- the prompt: the student's `format_prompt` (lab09) writes the conversation. The shipped
  model was trained on the closed layout, in which each finished message ends with
  ``<|end|>``; that is `format_prompt` of the messages with ``"\\n<|end|>"`` appended to
  each content, so the student's function writes exactly the framework's prompt;
- the ids: the tokenizer's encode with the student's `bpe_apply_merge` (lab12);
- generation: `generate_with` (the student's layers, cache and sampler);
- the reply: the student's `extract_response` (lab09) of prompt and output;
- the first turn, where lab13's contract holds (one user message, no system prompt, a BPE
  tokenizer, sampling by temperature and top-k only): the student's `chat_one_turn`
  answers it whole, and the reply is shown once it is finished (no streaming). Later
  turns carry history, which `chat_one_turn` cannot take: the pieces above answer them.

A message that itself contains a chat tag is formatted by the framework, which keeps a
typed tag as plain text. When a student function fails during a reply (`PieceError`),
that piece goes back to the framework's, `on_fallback` is told, and the reply starts
again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import CHAT_TAGS, END_TAG, Conversation
from framework.generate import GenerateConfig, GenerateResult
from framework.model import GPTModel
from framework.serving import ChatEngine, Reply, ReplySettings
from framework.tokenizer import Tokenizer
from grader.mine.decode import generate_with
from grader.mine.pieces import PieceError, Pieces
from grader.mine.tokenize import MineTokenizer

__all__ = ["MineEngine", "generate_mine", "serving_functions", "tokenizer_for"]


class MineEngine(ChatEngine):
    """`base`'s model and vocabulary, answering through `pieces`.

    Attributes:
        pieces: the functions in use (pieces that failed are the framework's again).
        on_fallback: called with the `PieceError` when a piece falls back.
    """

    def __init__(
        self,
        base: ChatEngine,
        pieces: Pieces,
        on_fallback: Callable[[PieceError], object] | None = None,
    ) -> None:
        super().__init__(base.model, base.tokenizer, base.name)
        self.base_tokenizer = base.tokenizer
        self.on_fallback = on_fallback
        self.pieces = pieces
        self.use(pieces)
        self._prompt_text: str | None = None  # the student's prompt text of this reply
        self._output = ""  # the text generated for this reply

    def use(self, pieces: Pieces) -> None:
        """Answer through `pieces` from now on."""
        self.pieces = pieces
        self.tokenizer = tokenizer_for(pieces, self.base_tokenizer)

    def fall_back(self, error: PieceError) -> None:
        """Make the failed piece the framework's; re-raise if it was not the student's."""
        if not self.pieces.is_mine(error.piece):
            raise error
        self.use(self.pieces.without(error.piece))
        if self.on_fallback is not None:
            self.on_fallback(error)

    def prompt_ids(
        self, system: str, messages: Sequence[tuple[str, str]], max_tokens: int | None = None
    ) -> list[int]:
        """Like `ChatEngine.prompt_ids`, the text written by the student's `format_prompt`."""
        self._prompt_text = None
        conv = Conversation(system, [])
        for role, content in messages:
            conv.add(role, content)  # the framework's checks of roles and contents
        texts = [system, *(c for _, c in conv.messages)]
        typed_tag = any(tag in text for text in texts for tag in CHAT_TAGS)
        if not self.pieces.is_mine("format") or typed_tag or not conv.messages:
            return super().prompt_ids(system, messages, max_tokens)
        budget = self.context - self.reply_room(conv, max_tokens) - 1  # BOS comes first
        msgs = conv.messages
        for start in [0, *(i for i in range(1, len(msgs)) if msgs[i][0] == "user")]:
            kept = ([("system", system)] if system else []) + msgs[start:]
            text = self.pieces.format_prompt([(r, f"{c}\n{END_TAG}") for r, c in kept])
            if not isinstance(text, str):
                why = f"returned {type(text).__name__}, expected a str"
                raise PieceError("format", "format_prompt", why)
            ids = self.tokenizer.encode(text)
            if len(ids) <= budget:
                self._prompt_text = text
                return [self.tokenizer.bos_id, *ids]
        return super().prompt_ids(system, messages, max_tokens)  # cut inside one message

    def complete(
        self,
        prompt_ids: list[int],
        config: GenerateConfig,
        rng: np.random.Generator,
        on_text: Callable[[str], object],
    ) -> GenerateResult:
        """Generation through the pieces (`generate_with`)."""
        result = generate_with(
            self.pieces, self.model, self.tokenizer, prompt_ids, config, rng, on_text
        )
        self._output = result.text
        return result

    def reply(
        self,
        system: str,
        messages: Sequence[tuple[str, str]],
        settings: ReplySettings | None = None,
        on_text: Callable[[str], object] | None = None,
    ) -> Reply:
        """Like `ChatEngine.reply`; a piece that fails falls back and the reply starts over."""
        while True:
            try:
                turn = self._one_turn(system, messages, settings or ReplySettings())
                if turn is not None:
                    if turn.text and on_text is not None:
                        on_text(turn.text)
                    return turn
                reply = super().reply(system, messages, settings, on_text)
                if self._prompt_text is not None:
                    reply.text = self._extract(self._prompt_text + self._output)
                return reply
            except PieceError as e:
                self.fall_back(e)

    def _one_turn(
        self, system: str, messages: Sequence[tuple[str, str]], s: ReplySettings
    ) -> Reply | None:
        """The student's `chat_one_turn` (lab13) reply, where its contract holds; else None."""
        fn = self.pieces.chat_one_turn
        plain = not (s.top_p < 1.0 or s.stop or s.presence_penalty or s.frequency_penalty)
        first = len(messages) == 1 and messages[0][0] == "user" and not system
        tok = self.base_tokenizer
        if fn is None or not self.pieces.is_mine("turn") or not plain or not first:
            return None
        if not isinstance(tok, BPETokenizer):
            return None
        ids = self.prompt_ids(system, messages, s.max_tokens)
        room = self.context - len(ids)
        limit = min(s.max_tokens or room, room)
        rng = np.random.default_rng(None if s.seed is None else s.seed % 2**64)
        text = fn(self.model, tok, messages[0][1], limit, rng, max(s.temperature, 0.0), s.top_k)
        if not isinstance(text, str):
            why = f"returned {type(text).__name__}, expected a str"
            raise PieceError("turn", "chat_one_turn", why)
        made = min(len(tok.encode(text)), limit)  # re-encoded: chat_one_turn returns text only
        return Reply(text.strip(), len(ids), made, "length" if made >= limit else "stop")

    def _extract(self, output: str) -> str:
        text = self.pieces.extract_response(output)
        if not isinstance(text, str):
            why = f"returned {type(text).__name__}, expected a str"
            raise PieceError("format", "extract_response", why)
        return text


def _healing(
    name: str,
    student: Callable[..., object],
    framework: Callable[..., object],
    report: Callable[[str], object],
) -> Callable[..., object]:
    """`student`, except that where it raises and `framework` does not, the framework's
    answer is used, from then on always (a ValueError both raise is the right answer)."""
    broken: list[PieceError] = []

    def call(*args: object) -> object:
        if broken:
            return framework(*args)
        try:
            return student(*args)
        except PieceError as e:
            try:
                answer = framework(*args)
            except Exception:
                raise (e.__cause__ or e) from None  # e.g. the 400 of a malformed line
            broken.append(e)
            report(f"{e}; the framework's {name} is used from now on")
            return answer

    return call


def serving_functions(
    pieces: Pieces, report: Callable[[str], object]
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The `parse_request_line` and `build_response` a `ChatService` should use.

    The student's (lab10) when the http piece is theirs, each falling back to the
    framework's for good if it fails where the framework's does not.
    """
    default = Pieces()
    if not pieces.is_mine("http"):
        return default.parse_request_line, default.build_response
    parse = _healing("parse_request_line", pieces.parse_request_line,
                     default.parse_request_line, report)  # fmt: skip
    build = _healing("build_response", pieces.build_response, default.build_response, report)
    return parse, build


def tokenizer_for(pieces: Pieces, tok: Tokenizer) -> Tokenizer:
    """`tok`, encoding through the student's `bpe_apply_merge` when that piece is theirs."""
    if pieces.is_mine("bpe") and isinstance(tok, BPETokenizer):
        return MineTokenizer(tok, pieces.bpe_apply_merge)
    return tok


def generate_mine(
    pieces: Pieces,
    model: GPTModel,
    tok: Tokenizer,
    prompt: str,
    config: GenerateConfig,
    on_text: Callable[[str], object] | None = None,
    on_fallback: Callable[[PieceError], object] | None = None,
) -> GenerateResult:
    """`generate_with` from `prompt`; a piece that fails falls back and generation restarts."""
    while True:
        try:
            return generate_with(pieces, model, tokenizer_for(pieces, tok), prompt, config,
                                 None, on_text)  # fmt: skip
        except PieceError as e:
            if not pieces.is_mine(e.piece):
                raise
            pieces = pieces.without(e.piece)
            if on_fallback is not None:
                on_fallback(e)
