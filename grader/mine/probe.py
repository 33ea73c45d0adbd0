"""A short timing probe: would this student function make a chat reply wait?

A function can pass every check of its lab and still be far too slow to run inside the
model: a softmax with three nested Python loops is correct, and called 16 times per token
it turns a reply of a tenth of a second into a minute. `probe_piece` calls each function
of a piece on inputs of the sizes a reply uses (a prompt of `PROMPT` tokens, then `REPLY`
decode steps, with the loaded model's sizes), multiplies each time by how often a reply
calls it, and returns the estimate. It stops as soon as the estimate passes the budget,
and on POSIX an interval timer also cuts a single call that runs past it, so a probe
never takes much longer than the budget itself. Past the budget, the framework's own
version is timed the same way: only a piece `RATIO` times slower than it is slow, so a
busy machine does not make correct numpy code look slow.

The probe also notices a function that still raises `NotImplementedError`, or raises
anything else on a valid input.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from framework.attention import create_causal_mask
from framework.bpe_tokenizer import BPETokenizer
from framework.config import ModelConfig
from framework.model import GPTModel
from framework.tensor import Tensor, tensor_from, tensor_ones, tensor_zeros
from grader.mine.forward import wired_block
from grader.mine.pieces import Pieces
from grader.mine.tokenize import replay_merges

__all__ = ["PROMPT", "RATIO", "REPLY", "SLOW_SECONDS", "ProbeResult", "probe_piece"]

PROMPT = 64  # prompt tokens of the typical reply the probe prices (at most half the context)
REPLY = 64  # new tokens of that reply
SLOW_SECONDS = 0.5  # a piece that adds more than this to such a reply makes the chat sluggish
RATIO = 20.0  # ... and is this many times slower than the framework's (numpy vs. loops: 100×+)
_TEXT = "你好！请问 1+2 等于几？Hello, what is attention in a Transformer? " * 4


@dataclass
class ProbeResult:
    """What the probe found for one piece."""

    seconds: float  # estimated time the piece takes in one typical reply
    slow: bool  # seconds > budget (the probe may have stopped early)
    slowest: str = ""  # "softmax: 48.2 ms per call on [64, 64]"
    stub: str = ""  # a function that raised NotImplementedError
    error: str = ""  # "softmax raised ValueError: ..." on a valid input
    cut: bool = False  # one call ran past the deadline and was interrupted
    framework: float | None = None  # the framework's version's seconds, when measured


class _TooSlow(BaseException):
    """Raised into a probed call by the interval timer (BaseException: not swallowed)."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Cut the block after `seconds` where an interval timer is available (POSIX, main thread)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or not 0 < seconds < 1e6:  # no timer: off, or an unbounded probe
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _TooSlow

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class _Call:
    """One way a reply calls a function: its arguments, and how many times."""

    name: str
    make_args: Callable[[], tuple[Any, ...]]
    count: int
    label: str  # the input's size, for the report


def _rand(rng: np.random.Generator, *shape: int) -> Tensor:
    return tensor_from(rng.standard_normal(shape).astype(np.float32))


@dataclass
class _Sizes:
    """The typical reply for a model: p prompt tokens, n decode steps over up to t keys."""

    p: int
    t: int
    n: int
    hd: int
    h: int
    layers: int
    heads: int  # heads of all layers together
    rng: np.random.Generator

    @classmethod
    def of(cls, c: ModelConfig) -> _Sizes:
        p = min(PROMPT, c.max_seq_len // 2)
        t = min(c.max_seq_len, p + REPLY // 2)  # a mid-reply decode step attends over t keys
        hd, heads = c.hidden_dim // c.num_heads, c.num_heads * c.num_layers
        return cls(p, t, REPLY, hd, c.hidden_dim, c.num_layers, heads, np.random.default_rng(0))

    def rand(self, *shape: int) -> Tensor:
        return _rand(self.rng, *shape)


def _per_row(
    name: str,
    z: _Sizes,
    args: Callable[[int, int], tuple[Any, ...]],
    count: int,
    label: Callable[[int, int], str],
) -> list[_Call]:
    """A decode-step call (1 row, `count` × REPLY times) and a prefill call (p rows, `count`)."""
    return [
        _Call(name, lambda: args(1, z.t), count * z.n, label(1, z.t)),
        _Call(name, lambda: args(z.p, z.p), count, label(z.p, z.p)),
    ]


def _model_calls(key: str, model: GPTModel, z: _Sizes) -> list[_Call]:
    """The calls a reply makes to a piece of the model's forward (not the cache)."""
    hd, h, lay = z.hd, z.h, z.layers
    square = lambda s, t: f"[{s}, {t}]"  # noqa: E731
    if key == "scores":
        return _per_row(
            "attention_scores",
            z,
            lambda s, t: (z.rand(s, hd), z.rand(t, hd), 0.25),
            z.heads,
            lambda s, t: f"[{s}, {hd}]×[{t}, {hd}]",
        )
    if key == "mask":
        return _per_row(
            "apply_mask",
            z,
            lambda s, t: (z.rand(s, t), tensor_from(create_causal_mask(t).numpy()[-s:])),
            z.heads,
            square,
        )
    if key == "softmax":
        return _per_row("softmax", z, lambda s, t: (z.rand(s, t),), z.heads, square)
    if key == "layernorm":
        ln = (tensor_ones((h,)), tensor_zeros((h,)), 1e-5)
        return _per_row(
            "layernorm",
            z,
            lambda s, t: (z.rand(s, h), *ln),
            2 * lay + 1,
            lambda s, t: f"[{s}, {h}]",
        )
    if key == "residual":
        return _per_row(
            "residual_add",
            z,
            lambda s, t: (z.rand(s, h), z.rand(s, h)),
            2 * lay,
            lambda s, t: f"[{s}, {h}]",
        )
    if key == "block":
        block = model.blocks[0]  # its attention the framework's: time the student's wiring
        return _per_row(
            "block_forward",
            z,
            lambda s, t: (block, z.rand(s, h), create_causal_mask(s)),
            lay,
            lambda s, t: f"[{s}, {h}]",
        )
    return []


def _cache_calls(z: _Sizes, c: ModelConfig, pieces: Pieces) -> list[_Call]:
    size = (z.layers, c.max_seq_len, z.h)
    made: list[Any] = []

    def cache() -> Any:  # made by the student's alloc, on first use (inside the probe)
        if not made:
            made.append(pieces.kv_cache_alloc(*size))
        return made[0]

    return [
        _Call("kv_cache_alloc", lambda: size, 1, f"{list(size)}"),
        _Call("kv_cache_len", lambda: (cache(), 0), z.layers * (z.n + 1), "layer 0"),
        _Call(
            "kv_cache_append",
            lambda: (cache(), 0, z.rand(z.h), z.rand(z.h)),
            z.layers * (z.p + z.n),
            f"rows [{z.h}]",
        ),
    ]


def _calls(key: str, model: GPTModel, tok: Any, pieces: Pieces) -> list[_Call]:
    """The calls a typical reply makes to piece `key`, smallest first."""
    c: ModelConfig = model.config
    z = _Sizes.of(c)
    v = c.vocab_size
    if key == "kv_cache":
        return _cache_calls(z, c, pieces)
    if key == "sampling":
        return [
            _Call("sample_greedy", lambda: (z.rand(v),), z.n, f"[{v}]"),
            _Call("sample_temperature", lambda: (z.rand(v), 0.8, z.rng), z.n, f"[{v}]"),
            _Call("sample_top_k", lambda: (z.rand(v), 40, 0.8, z.rng), z.n, f"[{v}]"),
        ]
    if key == "bpe" and isinstance(tok, BPETokenizer):
        merges, data = tok.merges, _TEXT.encode()
        return [
            _Call(
                "bpe_apply_merge",
                lambda: (pieces.bpe_apply_merge, merges, data),
                3,
                f"{len(_TEXT)} characters",
            )
        ]
    if key == "format":
        msgs = [("system", "Be brief."), *[(r, _TEXT[:40]) for r in ("user", "assistant") * 3]]
        output = "<|user|>\nhi\n<|assistant|>\n" + _TEXT * 2
        return [
            _Call("format_prompt", lambda: (msgs,), 3, f"{len(msgs)} messages"),
            _Call("extract_response", lambda: (output,), 1, f"{len(output)} characters"),
        ]
    if key == "http":
        body = _TEXT * 8
        return [
            _Call(
                "parse_request_line", lambda: ("POST /v1/chat/completions HTTP/1.1",), 1, "one line"
            ),
            _Call(
                "build_response",
                lambda: (200, "OK", "application/json", body),
                1,
                f"{len(body)} characters",
            ),
        ]
    return _model_calls(key, model, z)


def _target(key: str, name: str, pieces: Pieces) -> Callable[..., Any]:
    if key == "bpe":
        return replay_merges  # the student's merge is passed in: time the whole encode
    if name == "block_forward" and pieces.block_forward is None:
        return partial(wired_block, pieces)  # the framework's block
    fn = getattr(pieces, name)
    assert fn is not None
    return fn  # type: ignore[no-any-return]


def _time_call(fn: Callable[..., Any], call: _Call, cut: float) -> float | ProbeResult:
    """The fastest of a few runs of one call, or the `ProbeResult` that ends the probe."""
    best = float("inf")
    for _ in range(3 if call.count > 10 else 1):
        try:
            with _deadline(cut):
                args = call.make_args()
                start = time.perf_counter()
                fn(*args)
        except _TooSlow:
            why = f"{call.name}: > {cut:.1f} s for one call on {call.label}"
            return ProbeResult(cut, True, why, cut=True)
        except NotImplementedError:
            return ProbeResult(0.0, False, stub=call.name)
        except Exception as e:
            return ProbeResult(
                0.0, False, error=f"{call.name} raised {type(e).__name__}: {e!s:.160}"
            )
        best = min(best, time.perf_counter() - start)  # the fastest run: least noise
    return best


def _cost(key: str, model: GPTModel, tok: Any, pieces: Pieces, limit: float) -> ProbeResult:
    """The estimated seconds per reply of piece `key`; stops once past `limit`."""
    costs: dict[str, float] = {}
    slowest = (0.0, "")
    combine = max if key == "sampling" else sum  # a reply uses one sampler, every other call
    for call in _calls(key, model, tok, pieces):
        best = _time_call(_target(key, call.name, pieces), call, limit * 1.5)
        if isinstance(best, ProbeResult):
            return best
        costs[call.name] = costs.get(call.name, 0.0) + best * call.count
        if best * call.count > slowest[0]:
            per = f"{best * 1e3:.2f} ms per call on {call.label}, × {call.count}"
            slowest = (best * call.count, f"{call.name}: {per}")
        if combine(costs.values()) > limit:
            break
    total = combine(costs.values()) if costs else 0.0
    return ProbeResult(total, total > limit, slowest[1])


def probe_piece(
    key: str, model: GPTModel, tok: Any, pieces: Pieces, budget: float = SLOW_SECONDS
) -> ProbeResult:
    """Time piece `key` as `pieces` holds it (the student's functions, unguarded).

    Slow means: more than `budget` seconds per typical reply, and more than `RATIO` times
    the framework's own version on this machine (a busy machine slows both).

    Args:
        key: a `PieceInfo.key`.
        model: the model the chat will run (its sizes set the inputs).
        tok: its tokenizer (the BPE probe encodes with its merges).
        pieces: the functions to time.
        budget: seconds per reply beyond which the piece is too slow.
    """
    found = _cost(key, model, tok, pieces, budget)
    if not found.slow or found.cut:
        return found
    reference = _cost(key, model, tok, Pieces(), float("inf")).seconds
    limit = RATIO * reference
    if limit > budget:  # a busy machine: measure the student's up to the higher limit
        found = _cost(key, model, tok, pieces, limit)
    found.framework = reference
    return found
