"""One-token decode steps with the weights prepared once: the fast path of generation.

A decode step feeds one token through the model with a KV cache. `GPTModel.forward` does
that too, but it validates its inputs and gathers its weights again at every call, and for
one token that bookkeeping costs more than the arithmetic. `StepDecoder` does it once, when
it is made, and folds what can be folded into the matrices that follow:

    LayerNorm γ, β  into the next matrix:  (x̂·γ + β) @ W  =  x̂ @ (γ·W) + β @ W
    1/√hd           into the query columns of W_qkv (scores need q·k / √hd)
    GELU's ½        into W2:  (½·u·(1 + tanh(…))) @ W2  =  (u·(1 + tanh(…))) @ (½·W2)

so a step is a few dozen numpy calls on [H]-sized vectors, block after block through
`run_blocks`, the loop of every forward. The results equal
`GPTModel.forward(ids=[token], kv_cache, start_pos)` up to float32 rounding (the tests
hold them within 1e-5), and the cache is filled exactly as that forward fills it.

The folded weights are a snapshot: make a new `StepDecoder` after the model's weights
change (`framework.generate.Decoder` makes one per generation).

Not here: prefill of several tokens (`GPTModel.forward` with the cache), batching,
sampling. Where the idea comes from: llama.cpp and other inference engines, which keep a
decode graph built once and fold normalisation scales into the following weights.

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

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from framework.ffn import GELU_A, GELU_C
from framework.kv_cache import KVCache
from framework.model import GPTModel
from framework.module import array_of
from framework.transformer import BlockWeights, run_blocks

__all__ = ["StepDecoder"]

F32 = NDArray[np.float32]


@dataclass
class _Layer:
    """One block with its LayerNorm scales and constants folded into the matrices."""

    w_qkv: F32  # (H, 3H) = γ1·[W_q/√hd | W_k | W_v]
    b_qkv: F32  # (3H,)   = β1 @ [W_q/√hd | W_k | W_v]
    w_o: F32  # (H, H)
    w1: F32  # (H, F) = γ2·W1
    b1: F32  # (F,)   = β2 @ W1 + b1
    w2: F32  # (F, H) = ½·W2
    b2: F32  # (H,)

    @classmethod
    def fold(cls, b: BlockWeights) -> _Layer:
        h = b.w_o.shape[0]
        scale = np.ones(3 * h)  # (3H,) 1/√hd on the query columns only
        scale[:h] = 1.0 / np.sqrt(h // b.num_heads)
        w_qkv = b.w_qkv.astype(np.float64) * scale  # (H, 3H)
        w1 = b.w1.astype(np.float64)  # (H, F)
        return cls(
            _f32(b.ln1_gamma[:, None] * w_qkv), _f32(b.ln1_beta @ w_qkv), _f32(b.w_o),
            _f32(b.ln2_gamma[:, None] * w1), _f32(b.ln2_beta @ w1 + b.b1), _f32(0.5 * b.w2),
            _f32(b.b2),
        )  # fmt: skip


def _f32(a: NDArray[np.floating]) -> F32:
    return np.ascontiguousarray(a, dtype=np.float32)


class StepDecoder:
    """Decode steps for `model`, one token each, weights read and folded once.

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
        self.heads, self.eps = c.num_heads, np.float32(w.eps)
        self.tokens, self.positions = w.token_embedding.copy(), w.position_embedding.copy()
        self.layers = [_Layer.fold(b) for b in w.blocks]
        head = w.lm_head.astype(np.float64)  # (H, V)
        self.head, self.head_bias = _f32(w.final_gamma[:, None] * head), _f32(w.final_beta @ head)
        self.mean = np.full(c.hidden_dim, 1.0 / c.hidden_dim, dtype=np.float32)  # (H,)

    def step(self, token_id: int, pos: int, cache: KVCache) -> F32:
        """Logits [V] for `token_id` at position `pos`, given rows 0…pos−1 in `cache`.

        Writes the token's key and value rows at `pos` in every layer and sets every
        layer's length to pos + 1, as `GPTModel.forward([token_id], cache, pos)` does.

        Raises:
            ValueError: for an id outside [0, V), a position outside [0, max_seq_len), or
                a cache of another shape or holding fewer than `pos` rows (unchanged then).
        """
        self._check(token_id, pos, cache)
        keys, values = array_of(cache.k), array_of(cache.v)  # (L, maxS, H)

        def block(i: int, layer: _Layer, x: F32) -> F32:
            return self._block(layer, x, keys[i], values[i], pos)  # (H,)

        x = run_blocks(self.layers, self.tokens[token_id] + self.positions[pos], block)  # (H,)
        cache.lengths[:] = [pos + 1] * len(self.layers)
        logits: F32 = self._norm(x) @ self.head  # (V,)
        logits += self.head_bias
        return logits

    def _block(self, layer: _Layer, x: F32, keys: F32, values: F32, pos: int) -> F32:
        """One folded block on the row `x` [H]; writes K/V row `pos` of one cache layer."""
        h, n, nh = self.mean.size, pos + 1, self.heads
        qkv = self._norm(x) @ layer.w_qkv  # (3H,)
        qkv += layer.b_qkv
        keys[pos], values[pos] = qkv[h : 2 * h], qkv[2 * h :]
        k = keys[:n].reshape(n, nh, h // nh).transpose(1, 0, 2)  # (nh, n, hd)
        scores = k @ qkv[:h].reshape(nh, h // nh, 1)  # (nh, n, 1)
        scores -= scores.max(axis=1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=1, keepdims=True)
        v = values[:n].reshape(n, nh, h // nh).transpose(1, 2, 0)  # (nh, hd, n)
        x = x + (v @ scores).reshape(h) @ layer.w_o  # (H,)
        u = self._norm(x) @ layer.w1  # (F,)
        u += layer.b1
        t = u * u  # (F,) GELU: u·(1 + tanh(c·(u + a·u³))); the ½ is in w2
        t *= np.float32(GELU_C * GELU_A)
        t += np.float32(GELU_C)
        t *= u
        np.tanh(t, out=t)
        t += 1
        t *= u
        x += t @ layer.w2
        x += layer.b2
        return x

    def _norm(self, x: F32) -> F32:
        """(x − mean) / √(var + eps) of one row [H]; γ and β live in the next matrix."""
        centred = x - x @ self.mean  # (H,)
        centred *= 1.0 / np.sqrt((centred @ centred) * self.mean[0] + self.eps)
        return centred

    def _check(self, token_id: int, pos: int, cache: KVCache) -> None:
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
