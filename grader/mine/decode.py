"""Generation through the pieces: the framework's decode loop with the student's sampler,
KV cache and model forward.

`generate_with(pieces, model, tokenizer, prompt, config)` is `framework.generate.generate`
step for step (the same context window, sliding, stop ids, stop strings and UTF-8
streaming, from the framework's own `Decoder` and text stream), with three steps swapped:

- the model: `PiecewiseModel` when a piece inside the forward is the student's;
- the cache: made by the `kv_cache_alloc` piece, a new one whenever the window slides (a
  lab11 cache only grows, so it is never rewound);
- the choice of the next id: `sample_with`, which maps the settings onto lab08's three
  functions (greedy for T ≤ 0, `sample_top_k` with a k, else `sample_temperature`). The
  framework still applies a repetition penalty and top-p first (no lab writes them): it
  gives the student's function logits with the ids top-p drops set to -inf.

With every piece the framework's, the result is exactly `generate`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.generate import (
    Decoder,
    GenerateConfig,
    GenerateResult,
    _allowed,
    _prompt_ids,
)
from framework.kv_cache import KVCache
from framework.model import GPTModel
from framework.sampling import apply_repetition_penalty, check_logits, probabilities, sample
from framework.tensor import tensor_from
from framework.text_stream import TextStream
from framework.tokenizer import Tokenizer
from grader.mine.forward import PiecewiseModel
from grader.mine.pieces import PieceError, Pieces

__all__ = ["MineDecoder", "generate_with", "runner_for", "sample_with"]


class MineDecoder(Decoder):
    """`Decoder` whose cache comes from `new_cache`, a fresh one after every slide."""

    def __init__(
        self,
        model: GPTModel,
        prompt_ids: Sequence[int],
        use_cache: bool = True,
        window_keep: int | None = None,
        new_cache: Callable[[], KVCache] | None = None,
    ) -> None:
        super().__init__(model, prompt_ids, use_cache, window_keep)
        self.new_cache = new_cache
        if self.cache is not None and new_cache is not None:
            self.cache = new_cache()

    def push(self, token_id: int) -> None:
        """Append a token; when the window slides, start a new cache for the re-prefill."""
        slides = self.slides
        super().push(token_id)
        if self.slides != slides and self.cache is not None and self.new_cache is not None:
            self.cache = self.new_cache()


def runner_for(pieces: Pieces, model: GPTModel) -> GPTModel:
    """The model to run: `model` itself unless a piece of its forward is the student's."""
    return PiecewiseModel(model, pieces) if pieces.runs_model else model


def decoder_for(
    pieces: Pieces, runner: GPTModel, ids: Sequence[int], use_cache: bool, keep: int | None
) -> Decoder:
    """A decoder over `runner`, its cache made by the pieces when the forward is theirs."""
    if isinstance(runner, PiecewiseModel):
        return MineDecoder(runner, ids, use_cache, keep, runner.new_cache)
    return Decoder(runner, ids, use_cache, keep)


def sample_with(
    pieces: Pieces,
    logits: NDArray[Any],
    rng: np.random.Generator,
    *,
    temperature: float,
    top_k: int,
    top_p: float = 1.0,
    repetition_penalty: float = 1.0,
    previous: Iterable[int] = (),
) -> int:
    """The next id, by the sampling piece (the framework's `sample` unless it is the student's).

    Raises:
        PieceError: if the student's function returns anything but an id of finite logit.
    """
    if not pieces.is_mine("sampling"):
        return sample(
            logits,
            rng,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            repetition_penalty=repetition_penalty,
            previous=previous,
        )
    x = check_logits(logits)  # (V,) float64 copy
    if repetition_penalty != 1.0:
        x = apply_repetition_penalty(x, previous, repetition_penalty)
    if temperature <= 0:
        name, tok = "sample_greedy", pieces.sample_greedy(tensor_from(x))
    else:
        if top_p < 1.0:  # top-p is not a lab's: the framework drops those ids first
            x = np.where(probabilities(x, temperature, top_k, top_p) > 0, x, -np.inf)
        t = tensor_from(x)  # (V,) float32, -inf kept
        if 0 < top_k < x.size:
            name, tok = "sample_top_k", pieces.sample_top_k(t, top_k, temperature, rng)
        else:
            name, tok = "sample_temperature", pieces.sample_temperature(t, temperature, rng)
    if isinstance(tok, bool) or not isinstance(tok, int | np.integer):
        raise PieceError("sampling", name, f"returned {type(tok).__name__} {tok!r}, not an id")
    if not 0 <= tok < x.size or not np.isfinite(x[tok]):
        why = f"returned id {tok}, " + (
            f"outside [0, {x.size})" if not 0 <= tok < x.size else "whose logit is -inf"
        )
        raise PieceError("sampling", name, why)
    return int(tok)


def generate_with(
    pieces: Pieces,
    model: GPTModel,
    tokenizer: Tokenizer,
    prompt: str | Sequence[int],
    config: GenerateConfig | None = None,
    rng: np.random.Generator | None = None,
    on_text: Callable[[str], Any] | None = None,
) -> GenerateResult:
    """`framework.generate.generate`, run through `pieces` (see the module docstring).

    Raises:
        PieceError: when a student function fails; the caller may retry without it.
        TypeError, ValueError: as `generate`.
    """
    cfg = (config or GenerateConfig()).validate()
    rng = np.random.default_rng(cfg.seed) if rng is None else rng
    runner = runner_for(pieces, model)
    ids = _prompt_ids(tokenizer, prompt, cfg.add_bos)
    decoder = decoder_for(pieces, runner, ids, cfg.use_cache, cfg.window_keep)
    result = GenerateResult("", [], list(decoder.ids), "length", decoder.truncated)
    allowed = _allowed(tokenizer, model.config.vocab_size)
    stop_ids = set(cfg.stop_ids) | ({tokenizer.eos_id} if cfg.stop_at_eos else set())
    stream = TextStream(cfg.stop)
    for _ in range(cfg.max_new_tokens):
        logits = decoder.logits()  # (V,)
        if allowed is not None:
            logits = np.where(allowed, logits, -np.inf)
        tok = sample_with(
            pieces,
            logits,
            rng,
            temperature=cfg.temperature,
            top_k=cfg.top_k,
            top_p=cfg.top_p,
            repetition_penalty=cfg.repetition_penalty,
            previous=decoder.ids,
        )
        if tok in stop_ids:
            result.stop_reason = "eos" if tok == tokenizer.eos_id else "stop"
            break
        result.token_ids.append(tok)
        decoder.push(tok)
        if (piece := stream.feed(tokenizer.token_bytes(tok))) and on_text is not None:
            on_text(piece)
        if stream.stopped:
            result.stop_reason = "stop"
            break
    if (piece := stream.finish()) and on_text is not None:
        on_text(piece)
    result.text, result.slides = stream.text, decoder.slides
    return result
