"""Answering a conversation with a model: the prompt that fits, the reply as it is made.

`ChatEngine` is what `minillm serve` and `minillm chat` put between a conversation and the
model. `ChatEngine.reply(system, messages, settings, on_text)` builds the prompt with
`Conversation.prompt_ids` (the oldest turns dropped so that the prompt and room for the
reply fit the model's context), runs `framework.generate` with a KV cache (or, with
OpenAI's presence or frequency penalty, the same loop with the penalties on the logits),
stops at EOS, at any chat tag (a special id of a BPE vocabulary, or the tag's text with
the byte tokenizer) and at the caller's stop strings, and hands each finished piece of text to
`on_text` as soon as it is made. Leading and trailing whitespace of the reply is never
sent, so the streamed pieces add up to the returned text.

`load_chat_model` reads a model file and its tokenizer (the vocabulary its sidecar
names, if it has one) and refuses a pair that does not belong together; `shipped_model`
names the model that ships with the course.

Replies given at the same time (from several threads) decode together: each takes a seat
in the engine's `framework.batching.StepBatcher` (up to `batch_size` of them), and gets the
same tokens as it would alone. `Gate` admits callers, up to `batch_size` generating at once
and the others waiting their turn, and times the turns, so that a refused caller is told
how long the backlog will take.

What this module deliberately does not do: no HTTP (`framework.http_server`), no REPL
(`minillm chat`), no scheduling of its own (the batcher runs the steps).

Where the idea comes from: the C course's `chat()` (format, generate, extract), with its
message-count trimming replaced by a token budget, and the chat-serving loop of
llama.cpp's server (stream pieces, stop strings, a seed per request).

Example:
    >>> from framework.config import tiny_config
    >>> from framework.model import GPTModel, init_weights
    >>> from framework.tokenizer import ByteTokenizer
    >>> model = GPTModel(tiny_config()); init_weights(model, seed=0)
    >>> engine = ChatEngine(model, ByteTokenizer())
    >>> reply = engine.reply("", [("user", "hi")], ReplySettings(max_tokens=5, seed=1))
    >>> reply.prompt_tokens, reply.completion_tokens <= 5, reply.finish_reason
    (35, True, 'length')
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from framework.batching import Seat, StepBatcher
from framework.bpe_tokenizer import BPETokenizer
from framework.chat import CHAT_TAGS, Conversation
from framework.decode_step import StepDecoder
from framework.generate import GenerateConfig, GenerateResult, generate
from framework.model import GPTModel, model_load
from framework.shipped import load_checkpoint, meta_path
from framework.tokenizer import ByteTokenizer, Tokenizer

__all__ = [
    "MIN_TEXT",
    "Busy",
    "ChatEngine",
    "Gate",
    "Reply",
    "ReplySettings",
    "load_chat_model",
    "shipped_model",
]

DATA = Path(__file__).resolve().parent / "data"
SHIPPED_MODEL = DATA / "chat_model.bin"  # the course's trained chat model ...
SHIPPED_VOCAB = DATA / "chat_vocab.json"  # ... and the BPE vocabulary it was trained with


MIN_TEXT = 8  # ids of the newest message's text that a prompt keeps, however small the context


@dataclass
class ReplySettings:
    """How to sample one reply."""

    temperature: float = 0.8  # ≤ 0: greedy
    top_k: int = 0  # sample among the k most likely ids (0: no limit)
    top_p: float = 1.0  # nucleus mass (1.0: off)
    max_tokens: int | None = None  # None: until the context is full
    seed: int | None = None  # None: a fresh seed each reply
    stop: tuple[str, ...] = ()  # the reply ends before the first of these texts
    presence_penalty: float = 0.0  # subtracted from the logit of each id the reply has made
    frequency_penalty: float = 0.0  # ... and this, times how often it has made it


@dataclass
class Reply:
    """One finished reply and what it cost."""

    text: str  # stripped of surrounding whitespace
    prompt_tokens: int  # ids fed to the model, BOS included
    completion_tokens: int  # ids the model made for the reply
    finish_reason: str  # "stop" (EOS, a tag, a stop string) or "length"


class _Trim:
    """Streamed text in, the same text out without its leading and trailing whitespace."""

    def __init__(self) -> None:
        self.text = ""
        self._held = ""  # whitespace that may turn out to be trailing

    def feed(self, piece: str) -> str:
        held = self._held + piece
        if not self.text:
            held = held.lstrip()
        body = held.rstrip()
        self._held = held[len(body) :]
        self.text += body
        return body


class ChatEngine:
    """A model and its tokenizer, answering conversations.

    Attributes:
        model: the GPT.
        tokenizer: its tokenizer (byte or BPE).
        name: the model's name in API answers.
        batch_size: replies decoded together at most (set before the first reply).
        batcher: the batch they decode in, made at the first reply (None until then).
    """

    batch_size = 16

    def __init__(self, model: GPTModel, tokenizer: Tokenizer, name: str = "minillm") -> None:
        """Pair a model with a tokenizer.

        Raises:
            TypeError: if `model` is not a GPTModel or `tokenizer` not a Tokenizer.
            ValueError: if the tokenizer has more ids than the model.
        """
        if not isinstance(model, GPTModel):
            raise TypeError(f"model must be a GPTModel, got {type(model).__name__}")
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"tokenizer must be a Tokenizer, got {type(tokenizer).__name__}")
        if tokenizer.vocab_size > model.config.vocab_size:
            raise ValueError(
                f"the tokenizer has {tokenizer.vocab_size} ids but the model only "
                f"{model.config.vocab_size}: they do not belong together"
            )
        self.model, self.tokenizer, self.name = model, tokenizer, name
        self.batcher: StepBatcher | None = None
        self._lock = threading.Lock()
        token_id = getattr(tokenizer, "token_id", None)
        self._tag_ids = tuple(token_id(t) for t in CHAT_TAGS) if token_id is not None else ()

    @property
    def context(self) -> int:
        """The model's context length (max_seq_len)."""
        return self.model.config.max_seq_len

    def prompt_ids(
        self, system: str, messages: Sequence[tuple[str, str]], max_tokens: int | None = None
    ) -> list[int]:
        """The prompt ids: whole old turns dropped until room for the reply is left.

        The room kept for the reply is `max_tokens`, at most half the context. A small
        context (a byte-level model of 64 positions, whose tags alone take 33) keeps less
        room, so that the newest message keeps at least `MIN_TEXT` ids of its text.

        Raises:
            ValueError: if there is no message, or the context cannot hold even the tags.
            TypeError: for a role or content that is not a str.
        """
        conv = Conversation(system, [])
        for role, content in messages:
            conv.add(role, content)
        return conv.prompt_ids(self.tokenizer, self.context - self.reply_room(conv, max_tokens))

    def reply_room(self, conv: Conversation, max_tokens: int | None = None) -> int:
        """The ids kept free for the reply to `conv` (see `prompt_ids`)."""
        room = min(max_tokens or self.context // 4, self.context // 2)
        if conv.messages:
            bare = Conversation("", [])
            bare.add(conv.messages[-1][0], "")
            need = len(bare.prompt_ids(self.tokenizer, self.context)) + MIN_TEXT
            room = max(1, min(room, self.context - need))
        return room

    def reply(
        self,
        system: str,
        messages: Sequence[tuple[str, str]],
        settings: ReplySettings | None = None,
        on_text: Callable[[str], object] | None = None,
    ) -> Reply:
        """Generate the assistant's next reply to `messages`.

        Args:
            system: the system prompt ("" for none).
            messages: (role, content) pairs, oldest first; usually ending with the user's.
            settings: sampling and limits (default `ReplySettings()`).
            on_text: called with each finished piece of the reply as soon as it is made;
                an exception it raises (a client that went away) ends generation.

        Returns:
            The `Reply`; the pieces given to `on_text` join to `Reply.text`.

        Raises:
            ValueError, TypeError: for bad messages or settings.
        """
        s = settings or ReplySettings()
        ids = self.prompt_ids(system, messages, s.max_tokens)
        room = self.context - len(ids)
        config = GenerateConfig(
            max_new_tokens=min(s.max_tokens or room, room),
            temperature=s.temperature,
            top_k=s.top_k,
            top_p=s.top_p,
            stop=(*CHAT_TAGS, *s.stop),
            stop_ids=self._tag_ids,
            add_bos=False,
        )
        rng = np.random.default_rng(None if s.seed is None else s.seed % 2**64)
        trim = _Trim()

        def piece(text: str) -> None:
            if (out := trim.feed(text)) and on_text is not None:
                on_text(out)

        if s.presence_penalty or s.frequency_penalty:  # the framework's loop, whatever `complete`
            config.presence_penalty = s.presence_penalty
            config.frequency_penalty = s.frequency_penalty
            result = self._generate(ids, config, rng, piece)
        else:
            result = self.complete(ids, config, rng, piece)
        finish = "length" if result.stop_reason == "length" else "stop"
        return Reply(trim.text, len(ids), len(result.token_ids), finish)

    def complete(
        self,
        prompt_ids: list[int],
        config: GenerateConfig,
        rng: np.random.Generator,
        on_text: Callable[[str], object],
    ) -> GenerateResult:
        """The generation step of `reply`: continue `prompt_ids` with the model.

        A hook: a subclass may generate differently (`minillm chat --mine` runs the
        student's own sampler, KV cache and layers here); the default is `generate`, in
        a seat of the engine's batch.

        Args:
            prompt_ids: the prompt, BOS included.
            config: sampling settings, limits and stop conditions.
            rng: the generator to sample with.
            on_text: called with each finished piece of new text.

        Returns:
            What `framework.generate.generate` returns.
        """
        return self._generate(prompt_ids, config, rng, on_text)

    def _generate(
        self,
        prompt_ids: list[int],
        config: GenerateConfig,
        rng: np.random.Generator,
        on_text: Callable[[str], object],
    ) -> GenerateResult:
        """`generate` in a seat of the engine's batch (alone for a model it cannot batch)."""
        with self._seat() as seat:
            return generate(
                self.model, self.tokenizer, prompt_ids, config, rng, on_text=on_text, seat=seat
            )

    @contextmanager
    def _seat(self) -> Iterator[Seat | None]:
        """A seat in the batch, or None for a model whose `forward` is not the plain one."""
        plain = type(self.model).forward is GPTModel.forward and "forward" not in vars(self.model)
        if not plain:
            yield None
            return
        with self._lock:
            if self.batcher is None:  # the weights are folded at the first reply
                self.batcher = StepBatcher(StepDecoder(self.model), self.batch_size)
        with self.batcher.seat() as seat:
            yield seat


class Busy(Exception):
    """No turn to generate: the queue is full, or the wait was too long."""


class Gate:
    """Admits generations: `waiting` + 1 at most, of which `batch` generate at once.

    The admitted requests beyond the first either generate alongside it (in its batch,
    `batch` at most) or wait for a free place. Each turn is timed: `retry_after` is how
    long the requests admitted will take to be served, `batch` at a time (their rounds ×
    the average turn, rounded up), and a request whose wait would exceed `timeout` is
    refused at once rather than queued to time out.

    Example:
        >>> gate = Gate(waiting=0)
        >>> with gate.turn():
        ...     gate.busy, gate.backlog
        (True, 1)
        >>> gate.retry_after(default=2) >= 1
        True
    """

    def __init__(
        self,
        waiting: int,
        timeout: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        batch: int = 1,
    ) -> None:
        self._admitted = threading.BoundedSemaphore(waiting + 1)
        self._places = threading.BoundedSemaphore(batch)  # places in the batch
        self._count = threading.Lock()
        self.timeout = timeout
        self.clock = clock
        self.batch = batch
        self.backlog = 0  # requests admitted: those generating and those waiting
        self.generating = 0  # requests generating now
        self.average: float | None = None  # seconds per turn, a moving average; None: none yet

    @property
    def busy(self) -> bool:
        """True while a generation runs."""
        return self.generating > 0

    def _rounds(self) -> int:
        """Turns of the whole batch until the backlog is served (at least 1)."""
        return max(1, math.ceil(self.backlog / self.batch))

    def retry_after(self, default: int) -> int:
        """Seconds until the backlog is served: its rounds × average turn, rounded up, ≥ 1.

        Args:
            default: the seconds per turn assumed before any turn has been timed.
        """
        per_turn = default if self.average is None else self.average
        return max(1, math.ceil(self._rounds() * per_turn))

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Wait for this caller's place in the batch.

        Raises:
            Busy: if `waiting` + 1 callers are admitted already, if the measured backlog
                would take longer than `timeout` seconds, or if no place came within
                `timeout`.
        """
        if self.average is not None and self._rounds() * self.average > self.timeout:
            raise Busy(f"the queue would take about {self._rounds() * self.average:.0f} s")
        if not self._admitted.acquire(blocking=False):
            raise Busy("the queue is full")
        self._add(backlog=1)
        try:
            if not self._places.acquire(timeout=self.timeout):
                raise Busy(f"no turn within {self.timeout:g} s")
            self._add(generating=1)
            start = self.clock()
            try:
                yield
            finally:
                self._timed(self.clock() - start)
                self._add(generating=-1)
                self._places.release()
        finally:
            self._add(backlog=-1)
            self._admitted.release()

    def _add(self, backlog: int = 0, generating: int = 0) -> None:
        with self._count:
            self.backlog += backlog
            self.generating += generating

    def _timed(self, seconds: float) -> None:
        with self._count:  # weight 0.3: the average follows a change within a few turns
            self.average = seconds if self.average is None else 0.7 * self.average + 0.3 * seconds


def shipped_model() -> tuple[Path, Path]:
    """The paths of the model and vocabulary that ship with the course (may not exist yet)."""
    return SHIPPED_MODEL, SHIPPED_VOCAB


def load_chat_model(model_path: Path, vocab_path: Path | None = None) -> ChatEngine:
    """Load a model file and its tokenizer into a `ChatEngine` (generate, chat, serve).

    With a sidecar (``<model>.meta.json``) it is `framework.shipped.load_checkpoint`:
    the vocabulary the sidecar names, and a `vocab_path` with another fingerprint is
    refused. A plain model file (lab06 format) gets the vocabulary at `vocab_path`, else
    ``<model>.vocab.json`` beside it when that exists, else the byte tokenizer.

    Args:
        model_path: a file written by `model_save` or `save_checkpoint`.
        vocab_path: its BPE vocabulary, or None (see above).

    Returns:
        The engine, named after the model file.

    Raises:
        ValueError: for a malformed or truncated model, sidecar or vocabulary file, or a
            vocabulary that does not fit the model (the message says which file);
            `CheckpointError` (a ValueError) for a sidecar that does not match.
        OSError: if a file cannot be read.
    """
    tok: Tokenizer
    if meta_path(model_path).is_file():
        model, tok = load_checkpoint(model_path, vocab_path)
        return ChatEngine(model, tok, name=model_path.stem)
    model = model_load(model_path)
    beside = model_path.with_suffix(".vocab.json")
    if vocab_path is None and beside.is_file():
        vocab_path = beside
    tok = BPETokenizer.load(vocab_path) if vocab_path else ByteTokenizer()
    try:
        return ChatEngine(model, tok, name=model_path.stem)
    except ValueError as e:
        hint = "" if vocab_path else " (give the model's BPE vocabulary with --vocab)"
        raise ValueError(f"{model_path}: {e}{hint}") from None
