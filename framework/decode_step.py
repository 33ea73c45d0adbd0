"""One-token decode steps with the weights prepared once: the fast path of generation.

A decode step feeds one token through the model with a KV cache. `GPTModel.forward` does
that too, but it validates its inputs and gathers its weights again at every call, and for
one token that bookkeeping costs more than the arithmetic. `StepDecoder` does it once, when
it is made, and folds what can be folded into the matrices that follow:

    LayerNorm γ, β  into the next matrix:  (x̂·γ + β) @ W  =  x̂ @ (γ·W) + β @ W
    1/√hd           into the query columns of W_qkv (scores need q·k / √hd)
    GELU's ½        into W2:  (½·u·(1 + tanh(…))) @ W2  =  (u·(1 + tanh(…))) @ (½·W2)

`step(token, pos, cache)` decodes one sequence; `step_batch` decodes B sequences at once
(continuous batching, `framework.batching`): the dense products (QKV, output projection,
FFN, LM head) take all B rows in one matrix product, and each row attends over its own
cache. `step` is `step_batch` with B = 1, so a sequence gets the same logits alone as in
any batch, which is what makes a seeded reply the same whoever else is being served:

- attention always runs over all max_seq_len rows of a cache, the rows after the
  sequence's position masked to −inf, so its sums have one length whatever the batch;
- the rest of the step computes in float64 and rounds the logits to float32 at the end.
  BLAS sums a row of a B-row product in another order than a lone row (gemm, not gemv),
  so the two can differ in the last bit; in float64 that bit is ~1e-16, far below what
  float32 keeps, so the rounded logits agree (a 1-ulp difference is possible in principle,
  a few times in a million tokens, and then it changes a sampled token only if the draw falls
  within 1e-7 of a boundary).

The results equal `GPTModel.forward(ids=[token], kv_cache, start_pos)` up to float32
rounding (the tests hold them within 1e-5), and the cache is filled as that forward
fills it. The folded weights are a snapshot: make a new `StepDecoder` after the model's
weights change (`framework.generate.Decoder` makes one per generation).

Not here: prefill of several tokens (`GPTModel.forward` with the cache), gathering the
requests of a batch (`framework.batching`), sampling. Where the idea comes from: llama.cpp
and other inference engines, which keep a decode graph built once and fold normalisation
scales into the following weights; vLLM's and llama-server's continuous batching.

Example:
    >>> from framework.config import tiny_config
    >>> from framework.kv_cache import KVCache
    >>> from framework.model import GPTModel, init_weights
    >>> model = GPTModel(tiny_config()); init_weights(model, seed=0)
    >>> c = model.config
    >>> cache = KVCache(c.num_layers, c.max_seq_len, c.hidden_dim)
    >>> _ = model.forward([2, 76], kv_cache=cache)
    >>> step = StepDecoder(model).step(105, 2, cache)
    >>> bool(np.allclose(step, model.forward([2, 76, 105]).numpy()[2], atol=1e-5))
    True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from framework.ffn import GELU_A, GELU_C
from framework.kv_cache import KVCache
from framework.model import GPTModel
from framework.module import array_of
from framework.transformer import BlockWeights, run_blocks

__all__ = ["StepDecoder", "StepRequest"]

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]


@dataclass
class _Layer:
    """One block with its LayerNorm scales and constants folded into the matrices."""

    w_qkv: F64  # (H, 3H) = γ1·[W_q/√hd | W_k | W_v]
    b_qkv: F64  # (3H,)   = β1 @ [W_q/√hd | W_k | W_v]
    w_o: F64  # (H, H)
    w1: F64  # (H, F) = γ2·W1
    b1: F64  # (F,)   = β2 @ W1 + b1
    w2: F64  # (F, H) = ½·W2
    b2: F64  # (H,)

    @classmethod
    def fold(cls, b: BlockWeights) -> _Layer:
        h = b.w_o.shape[0]
        scale = np.ones(3 * h)  # (3H,) 1/√hd on the query columns only
        scale[:h] = 1.0 / np.sqrt(h // b.num_heads)
        w_qkv = b.w_qkv.astype(np.float64) * scale  # (H, 3H)
        w1 = b.w1.astype(np.float64)  # (H, F)
        return cls(
            _f64(b.ln1_gamma[:, None] * w_qkv), _f64(b.ln1_beta @ w_qkv), _f64(b.w_o),
            _f64(b.ln2_gamma[:, None] * w1), _f64(b.ln2_beta @ w1 + b.b1), _f64(0.5 * b.w2),
            _f64(b.b2),
        )  # fmt: skip


def _f64(a: NDArray[np.floating]) -> F64:
    return np.ascontiguousarray(a, dtype=np.float64)


@dataclass(frozen=True)
class StepRequest:
    """A generation's next decode step, asked of whoever runs the steps (the batch's decode
    thread, `framework.batching`): feed `token_id` at `pos` and answer with its logits [V]."""

    token_id: int
    pos: int


class StepDecoder:
    """Decode steps for `model`, one token per sequence, weights read and folded once.

    Args:
        model: the GPT; its weights are copied (folded) now.

    Raises:
        TypeError: if `model` is not a GPTModel.

    Example:
        >>> from framework.config import tiny_config
        >>> StepDecoder(GPTModel(tiny_config())).vocab_size
        260
    """

    def __init__(self, model: GPTModel) -> None:
        if not isinstance(model, GPTModel):
            raise TypeError(f"model must be a GPTModel, got {type(model).__name__}")
        c = model.config
        w = model.gpt_weights()
        self.vocab_size, self.max_seq_len = c.vocab_size, c.max_seq_len
        self.shape = (c.num_layers, c.max_seq_len, c.hidden_dim)
        self.heads, self.eps = c.num_heads, w.eps
        self.tokens, self.positions = _f64(w.token_embedding), _f64(w.position_embedding)
        self.layers = [_Layer.fold(b) for b in w.blocks]
        head = w.lm_head.astype(np.float64)  # (H, V)
        self.head, self.head_bias = _f64(w.final_gamma[:, None] * head), _f64(w.final_beta @ head)
        seen = np.arange(c.max_seq_len) < np.arange(c.max_seq_len + 1)[:, None]  # (maxS+1, maxS)
        self.masks = np.where(seen, 0.0, -np.inf).astype(np.float32)  # row n: n zeros, then −inf

    def step(self, token_id: int, pos: int, cache: KVCache) -> F32:
        """Logits [V] for `token_id` at position `pos`, given rows 0…pos−1 in `cache`.

        Writes the token's key and value rows at `pos` in every layer and sets every
        layer's length to pos + 1, as `GPTModel.forward([token_id], cache, pos)` does.

        Raises:
            ValueError: for an id outside [0, V), a position outside [0, max_seq_len), or
                a cache of another shape or holding fewer than `pos` rows (unchanged then).
        """
        self.check(token_id, pos, cache)
        keys, values = array_of(cache.k)[None], array_of(cache.v)[None]  # (1, L, maxS, H)
        logits: F32 = self.step_batch([token_id], [pos], [0], keys, values)[0]  # (V,)
        cache.lengths[:] = [pos + 1] * len(self.layers)
        return logits

    def step_batch(
        self,
        token_ids: Sequence[int],
        positions: Sequence[int],
        slots: Sequence[int],
        keys: F32,
        values: F32,
    ) -> F32:
        """Logits [B, V] for B sequences, each one token at its own position.

        Sequence b's cache is `keys[slots[b]]`, `values[slots[b]]` [L, maxS, H]: its
        rows 0…positions[b]−1 must be filled, and row positions[b] of every layer is
        written. Slots that no sequence names are read but not written, and their results
        are dropped (the caller's pool may hold caches that are not stepping now). The
        arguments are not checked here (`check` does it for one sequence).

        Args:
            token_ids, positions, slots: B ints each; the slots distinct.
            keys, values: (P, L, maxS, H) float32, P > max(slots).

        Returns:
            float32 logits [B, V], row b for sequence b.
        """
        tok, pos, rows = np.asarray(token_ids), np.asarray(positions), np.asarray(slots)
        lengths = np.ones(keys.shape[0], dtype=np.int64)  # (P,) a slot not stepping sees row 0
        lengths[rows] = pos + 1
        mask = self.masks[lengths][:, None, :, None]  # (P, 1, maxS, 1) −inf after each length

        def block(i: int, layer: _Layer, x: F64) -> F64:
            return self._block(layer, x, keys[:, i], values[:, i], rows, pos, mask)

        x = self.tokens[tok] + self.positions[pos]  # (B, H)
        if len(x) == 1:  # one row as a vector: numpy's vector @ matrix is faster
            x = x[0]  # (H,)
        x = run_blocks(self.layers, x, block)  # (B, H) or (H,)
        logits = self._norm(x) @ self.head  # (B, V) or (V,)
        logits += self.head_bias
        return logits.astype(np.float32).reshape(len(tok), -1)  # (B, V)

    def _block(
        self, layer: _Layer, x: F64, keys: F32, values: F32, rows: NDArray[np.int64],
        pos: NDArray[np.int64], mask: F32,
    ) -> F64:  # fmt: skip
        """One folded block on the rows `x` [B, H] (or one row [H]); writes their K/V rows."""
        h = x.shape[-1]
        qkv = self._norm(x) @ layer.w_qkv  # (B, 3H)
        qkv += layer.b_qkv
        keys[rows, pos], values[rows, pos] = qkv[..., h : 2 * h], qkv[..., 2 * h :]
        attended = self._attend(qkv[..., :h], keys, values, rows, mask).reshape(x.shape)
        x = x + attended @ layer.w_o  # (B, H)
        u = self._norm(x) @ layer.w1  # (B, F)
        u += layer.b1
        t = u * u  # (B, F) GELU: u·(1 + tanh(c·(u + a·u³))); the ½ is in w2
        t *= GELU_C * GELU_A
        t += GELU_C
        t *= u
        np.tanh(t, out=t)
        t += 1
        t *= u
        x += t @ layer.w2
        x += layer.b2
        return x

    def _attend(self, q: F64, keys: F32, values: F32, rows: NDArray[np.int64], mask: F32) -> F32:
        """Each row's attention over its own cache: softmax(q·kᵀ + mask) @ v, per head.

        Every slot of `keys` [P, maxS, H] is computed, over all maxS rows (the mask
        hides the rows after each position): the same matrix shapes whatever the batch.
        """
        p, s, h = keys.shape
        nh, hd = self.heads, h // self.heads
        every = rows.tolist() == list(range(p))  # each slot steps, in order: no scatter
        queries = q.reshape(-1, nh, hd, 1).astype(np.float32)  # (B, nh, hd, 1)
        if not every:
            scattered = np.zeros((p, nh, hd, 1), dtype=np.float32)  # (P, nh, hd, 1)
            scattered[rows] = queries
            queries = scattered
        k = keys.reshape(p, s, nh, hd).transpose(0, 2, 1, 3)  # (P, nh, maxS, hd)
        scores = k @ queries  # (P, nh, maxS, 1)
        scores += mask
        scores -= scores.max(axis=2, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=2, keepdims=True)
        v = values.reshape(p, s, nh, hd).transpose(0, 2, 3, 1)  # (P, nh, hd, maxS)
        out: F32 = (v @ scores).reshape(p, h)  # (P, H)
        return out if every else out[rows]  # (B, H)

    def _norm(self, x: F64) -> F64:
        """(x − mean) / √(var + eps) of each row [B, H] (or of one row [H]); γ and β live in
        the next matrix."""
        inv_h = 1.0 / x.shape[-1]
        if x.ndim == 1:  # one row: the same sums, the scalars around them in Python (2x faster)
            row: F64 = x - np.add.reduce(x) * inv_h  # (H,)
            row *= 1.0 / math.sqrt(np.add.reduce(row * row) * inv_h + self.eps)
            return row
        centred: F64 = x - x.sum(axis=-1, keepdims=True) * inv_h  # (B, H)
        centred *= 1.0 / np.sqrt((centred * centred).sum(axis=-1, keepdims=True) * inv_h + self.eps)
        return centred

    def check(self, token_id: int, pos: int, cache: KVCache) -> None:
        """Raise ValueError unless `step(token_id, pos, cache)` can run (see `step`)."""
        if not 0 <= token_id < self.vocab_size:
            raise ValueError(f"token id must be in [0, {self.vocab_size}), got {token_id}")
        if not 0 <= pos < self.max_seq_len:
            raise ValueError(f"position must be in [0, {self.max_seq_len}), got {pos}")
        if (cache.num_layers, cache.max_seq_len, cache.hidden_dim) != self.shape:
            raise ValueError(f"the KV cache must be {list(self.shape)} [L, max_seq_len, H]")
        if min(cache.lengths) < pos:
            raise ValueError(
                f"the KV cache holds {min(cache.lengths)} positions, position {pos} needs {pos}"
            )
