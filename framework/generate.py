"""Text generation: prefill the prompt once into a KV cache, then decode one token at a time.

    prompt ─encode─► ids ─prefill─► logits[-1] ─sample─► id ─decode 1 token─► logits ─► …

`generate(model, tokenizer, prompt, config, rng)` runs the loop and returns a
`GenerateResult`; `generate_stream(...)` yields the text as it is made, in pieces that never
split a multi-byte UTF-8 character. The prompt is prefilled through
`GPTModel.forward(ids, kv_cache, start_pos)`; each decode step then feeds only the new token,
at its true position, through a `StepDecoder` (`framework.decode_step`: the same arithmetic
with the weights prepared once per generation), so the cost of a step hardly grows with the
context. A model whose `forward` is overridden (a probe, a student's pieces) runs through its
own `forward` at every step instead. Generation ends at EOS (or another stop id), before a
stop string, or after `max_new_tokens`. Given a `framework.batching.Seat`, the decode steps
run in a batch with other generations' (continuous batching, `minillm serve`), with the
same results as alone.

The context never overruns `max_seq_len`: a longer prompt loses its oldest tokens, and when
the context is full the window slides: the last `window_keep` tokens are prefilled again at
positions 0…, and decoding goes on. `Decoder` holds that state; with `use_cache=False` it
recomputes the whole window at every step, with exactly the same windows (the tests compare
the two step by step, and `bench/generate_cache.py` times them).

Not here: gathering a batch (`framework.batching`), beam search, speculative decoding. The C
course's
`generate.c` recomputes the whole sequence every step and overruns its buffer on a long
prompt; this loop follows Hugging Face `generate` (penalty, temperature, top-k, top-p, in
that order; OpenAI's presence and frequency penalties come first) and llama.cpp's context
shift (keep a part, re-prefill, continue).

Example:
    >>> from framework.config import tiny_config
    >>> from framework.model import GPTModel, init_weights
    >>> from framework.tokenizer import ByteTokenizer
    >>> model = GPTModel(tiny_config()); init_weights(model, seed=0)
    >>> out = generate(model, ByteTokenizer(), "Hi", GenerateConfig(max_new_tokens=5, seed=1))
    >>> len(out.token_ids), out.stop_reason
    (5, 'length')
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from framework.decode_step import StepDecoder, StepRequest
from framework.kv_cache import KVCache
from framework.model import GPTModel
from framework.sampling import sample
from framework.text_stream import TextStream
from framework.tokenizer import Tokenizer
from framework.validate import is_int, non_negative_int, positive_int

if TYPE_CHECKING:
    from framework.batching import Seat

__all__ = [
    "Decoder",
    "GenerateConfig",
    "GenerateResult",
    "generate",
    "generate_stream",
    "plain_forward",
]


@dataclass
class GenerateConfig:
    """How to generate; `GenerateConfig(temperature=0)` is greedy decoding."""

    max_new_tokens: int = 100  # stop after this many new tokens
    temperature: float = 1.0  # ≤ 0: greedy; < 1 sharper, > 1 flatter than the model
    top_k: int = 40  # sample among the k most likely ids only (0: no limit)
    top_p: float = 0.9  # ... and among the most likely ids whose mass reaches p (1.0: off)
    repetition_penalty: float = 1.0  # > 1 makes ids already in the context less likely
    presence_penalty: float = 0.0  # subtracted from the logit of each id already generated
    frequency_penalty: float = 0.0  # ... and this, times how often it was generated
    seed: int | None = None  # seeds the generator when no rng is passed (None: fresh entropy)
    stop: tuple[str, ...] = ()  # stop strings: the text ends just before the first one
    stop_ids: tuple[int, ...] = ()  # ids that end generation like EOS (e.g. a chat tag)
    stop_at_eos: bool = True  # the tokenizer's EOS id ends generation
    add_bos: bool = True  # put BOS before a text prompt (the corpus starts dialogues so)
    use_cache: bool = True  # KV cache; False recomputes the whole window at every step
    window_keep: int | None = None  # tokens kept when the context is full (None: half)

    def validate(self) -> GenerateConfig:
        """Check every field; return self (with `stop`/`stop_ids` as tuples).

        Raises:
            TypeError: for a field of the wrong type.
            ValueError: for a negative `max_new_tokens`, a penalty ≤ 0, an empty stop
                string, a negative stop id, or a `window_keep` < 1.
        """
        non_negative_int(self.max_new_tokens, "max_new_tokens")
        for name in ("temperature", "top_p", "repetition_penalty", "presence_penalty",
                     "frequency_penalty"):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
        if not is_int(self.top_k):
            raise TypeError(f"top_k must be an int, got {type(self.top_k).__name__}")
        if not self.repetition_penalty > 0:
            raise ValueError(f"repetition_penalty must be > 0, got {self.repetition_penalty}")
        if self.seed is not None:
            non_negative_int(self.seed, "seed")
        stop: Any = self.stop  # a single str is accepted too
        self.stop = (stop,) if isinstance(stop, str) else tuple(stop)
        if not all(isinstance(s, str) and s for s in self.stop):
            raise ValueError(f"stop must hold non-empty strings, got {self.stop!r}")
        self.stop_ids = tuple(non_negative_int(i, "stop_ids[]") for i in self.stop_ids)
        if self.window_keep is not None:
            positive_int(self.window_keep, "window_keep")
        return self


@dataclass
class GenerateResult:
    """What `generate` made."""

    text: str  # the new text only (no prompt), cut before a stop string
    token_ids: list[int]  # the new ids (an EOS or stop id that ended it is not included)
    prompt_ids: list[int]  # the prompt as the model saw it (after truncation)
    stop_reason: str  # "eos", "stop" (a stop string or stop id) or "length"
    prompt_truncated: int = 0  # prompt tokens dropped from the left to fit the context
    slides: int = 0  # how often the full context window slid


def plain_forward(model: GPTModel) -> bool:
    """Whether `model` runs `GPTModel.forward` itself (not a subclass's or an instance's
    override): only then does `StepDecoder`'s fast step compute what its forward would."""
    return type(model).forward is GPTModel.forward and "forward" not in vars(model)


class Decoder:
    """The context of one generation and the model state that matches it.

    `logits()` returns the next-token logits [V] for the current context, feeding the model
    only what it has not seen yet; `push(id)` appends a token, sliding the window when the
    context would pass `max_seq_len`. With a `seat`, the cache is the seat's and the decode
    steps run in its batch (prefills stay alone).

    Example:
        >>> from framework.config import tiny_config
        >>> model = GPTModel(tiny_config())
        >>> d = Decoder(model, [2, 76, 105])
        >>> d.logits().shape, d.position
        ((260,), 3)
    """

    def __init__(
        self,
        model: GPTModel,
        prompt_ids: Sequence[int],
        use_cache: bool = True,
        window_keep: int | None = None,
        seat: Seat | None = None,
    ) -> None:
        if not isinstance(model, GPTModel):
            raise TypeError(f"model must be a GPTModel, got {type(model).__name__}")
        c = model.config
        ids = [int(i) for i in prompt_ids]
        if not ids:
            raise ValueError("the prompt is empty: give at least one token (e.g. BOS)")
        self.model, self.max_len = model, c.max_seq_len
        self.keep = self.max_len // 2 if window_keep is None else min(window_keep, self.max_len)
        self.ids = ids[-self.max_len :]  # a longer prompt loses its oldest tokens
        self.truncated = len(ids) - len(self.ids)
        self.cache = KVCache(c.num_layers, c.max_seq_len, c.hidden_dim) if use_cache else None
        # the one-token fast path, only where it computes what `model.forward` would
        plain = plain_forward(model)
        self.stepper: StepDecoder | Seat | None = None
        if use_cache and plain:
            self.stepper = StepDecoder(model) if seat is None else seat
            self.cache = self.cache if seat is None else seat.cache
        self.start = 0  # index in `ids` of the token at position 0
        self.fed = 0  # tokens of the window already in the cache
        self.slides = 0

    @property
    def position(self) -> int:
        """Position the next pushed token will take (length of the current window)."""
        return len(self.ids) - self.start

    def logits(self) -> NDArray[np.float32]:
        """Next-token logits [V] after the current context."""
        window = self.ids[self.start :]
        if self.cache is None:
            last: NDArray[np.float32] = self.model.forward(window).numpy()[-1]  # (V,)
            return last
        new = window[self.fed :]  # prefill: the whole window; decode: one token
        if self.stepper is not None and self.fed and len(new) == 1:
            last = self.stepper.step(new[0], self.fed, self.cache)  # (V,)
        else:
            out = self.model.forward(new, kv_cache=self.cache, start_pos=self.fed)  # (S, V)
            last = out.numpy()[-1]  # (V,)
        self.fed = len(window)
        return last

    def next_logits(self) -> Generator[StepRequest, NDArray[np.float32], NDArray[np.float32]]:
        """`logits()` as a generator: a one-token step through the fast path is yielded as
        a `StepRequest`, to be answered with its logits [V] by whoever runs the step
        (`framework.batching`); anything else (a prefill, a whole window) runs here."""
        pending = len(self.ids) - self.start - self.fed  # tokens not in the cache yet
        if self.cache is None or self.stepper is None or not self.fed or pending != 1:
            return self.logits()
        last = yield StepRequest(self.ids[-1], self.fed)  # (V,)
        self.fed += 1
        return last

    def push(self, token_id: int) -> None:
        """Append a token; if the window would pass max_seq_len, keep only its last part."""
        self.ids.append(int(token_id))
        if self.position > self.max_len:
            self.start = len(self.ids) - self.keep
            self.fed = 0  # re-prefill the kept part at positions 0…keep−1
            self.slides += 1


_OWN_LOGITS = Decoder.logits  # `_run` yields its steps only where it is not replaced


def _prompt_ids(tokenizer: Tokenizer, prompt: str | Sequence[int], add_bos: bool) -> list[int]:
    if isinstance(prompt, str):
        return tokenizer.encode(prompt, add_bos=add_bos)
    if isinstance(prompt, bytes) or not all(is_int(i) for i in prompt):
        raise TypeError(f"prompt must be a str or a sequence of ids, got {type(prompt).__name__}")
    return [tokenizer.check_id(i, "prompt id") for i in prompt]


def _allowed(tokenizer: Tokenizer, vocab_size: int) -> NDArray[np.bool_] | None:
    """Which ids may be sampled: those the tokenizer can produce (None: every id)."""
    known = getattr(tokenizer, "known_ids", None)
    ids = list(known()) if callable(known) else range(min(vocab_size, tokenizer.vocab_size))
    mask = np.zeros(vocab_size, dtype=bool)  # (V,)
    mask[[i for i in ids if i < vocab_size]] = True
    return None if mask.all() else mask


def _run(
    model: GPTModel,
    tokenizer: Tokenizer,
    prompt: str | Sequence[int],
    config: GenerateConfig,
    rng: np.random.Generator | None,
    result: GenerateResult,
    seat: Seat | None = None,
    scheduled: bool = False,
) -> Generator[str | StepRequest, Any, None]:
    """The loop: yields text pieces, fills `result` as it goes. `scheduled`: each decode
    step is yielded as a `StepRequest` and answered with its logits by the caller (the
    batch's decode thread), instead of being run here."""
    cfg = config.validate()
    rng = np.random.default_rng(cfg.seed) if rng is None else rng
    decoder = Decoder(model, _prompt_ids(tokenizer, prompt, cfg.add_bos), cfg.use_cache,
                      cfg.window_keep, seat)  # fmt: skip
    counts = np.zeros(model.config.vocab_size)  # (V,) times each id was generated
    result.prompt_ids, result.prompt_truncated = list(decoder.ids), decoder.truncated
    allowed = _allowed(tokenizer, model.config.vocab_size)
    stop_ids = set(cfg.stop_ids) | ({tokenizer.eos_id} if cfg.stop_at_eos else set())
    stream = TextStream(cfg.stop)
    for _ in range(cfg.max_new_tokens):
        logits: NDArray[np.floating]
        if scheduled and type(decoder).logits is _OWN_LOGITS:
            logits = yield from decoder.next_logits()  # (V,) the step runs in the batch
        else:  # unscheduled, or a `logits` replaced (a probe, a script): it is called
            logits = decoder.logits()  # (V,)
        if cfg.presence_penalty or cfg.frequency_penalty:
            logits = logits - cfg.presence_penalty * (counts > 0) - cfg.frequency_penalty * counts
        if allowed is not None:
            logits = np.where(allowed, logits, -np.inf)
        tok = sample(logits, rng, temperature=cfg.temperature, top_k=cfg.top_k, top_p=cfg.top_p,
                     repetition_penalty=cfg.repetition_penalty, previous=decoder.ids)  # fmt: skip
        if tok in stop_ids:
            result.stop_reason = "eos" if tok == tokenizer.eos_id else "stop"
            break
        result.token_ids.append(tok)
        counts[tok] += 1
        decoder.push(tok)
        if piece := stream.feed(tokenizer.token_bytes(tok)):
            yield piece
        if stream.stopped:
            result.stop_reason = "stop"
            break
    if piece := stream.finish():
        yield piece
    result.text, result.slides = stream.text, decoder.slides


def generate(
    model: GPTModel,
    tokenizer: Tokenizer,
    prompt: str | Sequence[int],
    config: GenerateConfig | None = None,
    rng: np.random.Generator | None = None,
    on_text: Callable[[str], Any] | None = None,
    seat: Seat | None = None,
) -> GenerateResult:
    """Continue `prompt` with the model; see the module docstring for the loop.

    Args:
        model: the GPT.
        tokenizer: turns the prompt into ids and the new ids into text.
        prompt: a text, or ids already encoded (then `add_bos` is not applied).
        config: how to sample and when to stop (default `GenerateConfig()`).
        rng: the only source of randomness (default: `default_rng(config.seed)`).
        on_text: called with each piece of new text as soon as it is complete.
        seat: a place in a `framework.batching.StepBatcher` to decode in (None: alone).

    Returns:
        A `GenerateResult` (new text and ids, the prompt as fed, why it stopped).

    Raises:
        TypeError, ValueError: for a bad config, prompt or tokenizer/model mismatch.

    Example:
        >>> from framework.config import tiny_config
        >>> from framework.model import GPTModel, init_weights
        >>> from framework.tokenizer import ByteTokenizer
        >>> model = GPTModel(tiny_config()); init_weights(model, seed=0)
        >>> cfg = GenerateConfig(max_new_tokens=4, temperature=0)
        >>> generate(model, ByteTokenizer(), "ab", cfg).token_ids == \\
        ...     generate(model, ByteTokenizer(), "ab", cfg).token_ids
        True
    """
    result = GenerateResult("", [], [], "length")
    if seat is not None:  # the batch's decode thread runs the steps (and the sampling)
        run = _run(model, tokenizer, prompt, config or GenerateConfig(), rng, result, seat, True)
        seat.batcher.drive(seat, run, on_text)
        return result
    for piece in _texts(_run(model, tokenizer, prompt, config or GenerateConfig(), rng, result)):
        if on_text is not None:
            on_text(piece)
    return result


def generate_stream(
    model: GPTModel,
    tokenizer: Tokenizer,
    prompt: str | Sequence[int],
    config: GenerateConfig | None = None,
    rng: np.random.Generator | None = None,
) -> Iterator[str]:
    """The new text in pieces, each yielded as soon as it is complete (see `generate`).

    A piece never ends inside a multi-byte UTF-8 character, and never shows text that may
    turn out to be the start of a stop string.

    Example:
        >>> from framework.config import tiny_config
        >>> from framework.tokenizer import ByteTokenizer
        >>> pieces = generate_stream(GPTModel(tiny_config()), ByteTokenizer(), "x",
        ...                          GenerateConfig(max_new_tokens=3, seed=0))
        >>> isinstance("".join(pieces), str)
        True
    """
    result = GenerateResult("", [], [], "length")
    yield from _texts(_run(model, tokenizer, prompt, config or GenerateConfig(), rng, result))


def _texts(run: Iterator[str | StepRequest]) -> Iterator[str]:
    """The pieces of a loop that runs its own steps (not `scheduled`): text only."""
    for piece in run:
        if not isinstance(piece, str):  # pragma: no cover - only a scheduled loop asks
            raise TypeError("an unscheduled generation asked for a step")
        yield piece
