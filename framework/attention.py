"""Multi-head causal self-attention: forward and backward side by side.

`MultiHeadAttention` holds four [H, H] projections stored [in, out] (y = x @ W, no biases).
Q, K and V come from one fused product x @ [W_q | W_k | W_v]; head h uses columns
[h·hd, (h+1)·hd) of each; every head computes softmax(q @ kᵀ · scale + mask) @ v with
scale = 1/√hd, and the heads' outputs are concatenated back into [S, H] before W_o.

Masks are additive: 0 keeps a position, -1e9 blocks it (`create_causal_mask`). -1e9 rather
than -inf: a row that is entirely blocked then becomes uniform instead of NaN, and a
blocked weight is exactly 0 after the softmax, so it gets no gradient.

Backward, per head, with P = softmax(scores)::

    dV = Pᵀ·dctx,  dP = dctx·Vᵀ,  dscores = P ⊙ (dP − rowsum(dP ⊙ P)),
    dQ = dscores·K·scale,  dK = dscoresᵀ·Q·scale

`attention_forward`/`attention_backward` work on numpy arrays of any float dtype and any
leading (batch) shape. `attention_forward_kv` is the inference variant that writes this
call's K/V rows into a `KVCache` layer and attends over every position stored so far.

Deliberately not here: dropout, biases, rotary embeddings; the KV cache itself lives in
`framework.kv_cache`.

Example:
    >>> create_causal_mask(3).tolist()[0]
    [0.0, -1000000000.0, -1000000000.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.module import Member, Module, array_of
from framework.tensor import Tensor, as_tensor, tensor_from, tensor_zeros
from framework.validate import check_rng, positive_int

__all__ = [
    "MASK_VALUE",
    "AttentionActivations",
    "MultiHeadAttention",
    "attention_backward",
    "attention_forward",
    "attention_forward_kv",
    "create_causal_mask",
]

MASK_VALUE = -1e9

Array = NDArray[Any]


def create_causal_mask(seq_len: int) -> Tensor:
    """[S, S] additive mask: 0 where j <= i, -1e9 where j > i (position i sees 0..i).

    Raises:
        TypeError: if `seq_len` is not an int.
        ValueError: if `seq_len` is not positive.
    """
    s = positive_int(seq_len, "seq_len")
    upper = np.triu(np.ones((s, s), dtype=bool), k=1)
    return tensor_from(np.where(upper, MASK_VALUE, 0.0))  # (S, S)


@lru_cache(maxsize=64)
def causal_mask_array(num_queries: int, num_keys: int, dtype: Any = np.float32) -> Array:
    """Additive mask [S, T] for S queries at the last S of T positions (j > T−S+i blocked).

    Cached and read-only: the same mask serves every layer and every call. It is the
    transposed view of a contiguous key-major [T, S] array, the layout `_attend` adds.
    """
    s, t = num_queries, num_keys
    blocked = np.tril(np.ones((t, s), dtype=bool), k=-(t - s + 1))  # (T, S): key j > T−S+i
    mask_t = np.where(blocked, MASK_VALUE, 0.0).astype(dtype)  # (T, S)
    mask_t.flags.writeable = False
    return mask_t.T  # (S, T) view


@lru_cache(maxsize=64)
def _ones_row(n: int, dtype: Any) -> Array:
    """[1, n] of ones, read-only: `ones @ a` sums `a` over its second-to-last axis."""
    row = np.ones((1, n), dtype=dtype)
    row.flags.writeable = False
    return row


def _heads(x: Array, num_heads: int) -> Array:
    """(..., T, H) -> (..., n_head, T, hd), a view when possible."""
    *lead, t, h = x.shape
    return np.swapaxes(x.reshape(*lead, t, num_heads, h // num_heads), -3, -2)


def _merge(x: Array) -> Array:
    """(..., n_head, T, hd) -> (..., T, H), a new contiguous array."""
    *lead, nh, t, hd = x.shape
    return np.swapaxes(x, -3, -2).reshape(*lead, t, nh * hd)


def _attend(q: Array, k: Array, v: Array, mask: Array | None) -> tuple[Array, Array]:
    """Softmax attention of scaled queries q [..., S, hd] over keys/values [..., T, hd].

    Scores are built key-major ([..., T, S]: one column per query), because numpy reduces
    over the second-to-last axis two to three times faster than over the last one.

    Returns:
        (context [..., S, hd], probs_t [..., T, S] = softmax weights, transposed).
    """
    probs_t = k @ np.swapaxes(q, -1, -2)  # (..., T, S)
    if mask is not None:
        probs_t += np.swapaxes(mask, -1, -2)
    probs_t -= probs_t.max(axis=-2, keepdims=True)  # max subtraction: exp never overflows
    np.exp(probs_t, out=probs_t)
    probs_t /= _ones_row(k.shape[-2], k.dtype) @ probs_t  # (..., 1, S) column sums
    return np.swapaxes(probs_t, -1, -2) @ v, probs_t  # (..., S, hd)


@dataclass
class AttentionActivations:
    """What the backward pass needs from one attention forward.

    Attributes:
        x: the input, [..., T, H].
        q: per-head queries already multiplied by scale = 1/√hd, [..., n_head, T, hd].
        k, v: per-head keys and values, [..., n_head, T, hd].
        probs_t: softmax weights, key-major (probs_t[..., j, i] is query i's weight on
            key j), [..., n_head, T, T].
        context: the heads' outputs concatenated, [..., T, H] (before W_o).
    """

    x: Array
    q: Array
    k: Array
    v: Array
    probs_t: Array
    context: Array


def attention_forward(
    x: Array, w_qkv: Array, w_o: Array, num_heads: int, mask: Array | None
) -> tuple[Array, AttentionActivations]:
    """Self-attention over `x` [..., T, H] with fused W_qkv [H, 3H]; returns (y, activations).

    Args:
        x: input rows, any leading batch shape.
        w_qkv: [W_q | W_k | W_v] side by side, [H, 3H].
        w_o: output projection [H, H].
        num_heads: n_head; hd = H / n_head, scale = 1/√hd.
        mask: additive mask broadcastable to [..., T, T] (query-major), or None.
    """
    h = w_o.shape[0]
    qkv = x @ w_qkv  # (..., T, 3H)
    q = _heads(qkv[..., :h], num_heads) * x.dtype.type(1.0 / np.sqrt(h // num_heads))
    k = _heads(qkv[..., h : 2 * h], num_heads)  # (..., n_head, T, hd)
    v = _heads(qkv[..., 2 * h :], num_heads)  # (..., n_head, T, hd)
    ctx, probs_t = _attend(q, k, v, mask)  # (..., n_head, T, hd)
    context = _merge(ctx)  # (..., T, H)
    return context @ w_o, AttentionActivations(x, q, k, v, probs_t, context)


def attention_backward(
    dy: Array, act: AttentionActivations, w_qkv: Array, w_o: Array
) -> tuple[Array, Array, Array]:
    """Gradients of attention given d(loss)/dy [..., T, H].

    Returns:
        (dx [..., T, H], dw_qkv [H, 3H], dw_o [H, H]), summed over all rows.
    """
    h = w_o.shape[0]
    nh, t, hd = act.q.shape[-3:]
    dw_o = act.context.reshape(-1, h).T @ dy.reshape(-1, h)  # (H, H)
    dctx = _heads(dy @ w_o.T, nh)  # (..., n_head, T, hd)
    dv = act.probs_t @ dctx  # (..., n_head, T, hd)
    dscores_t = act.v @ np.swapaxes(dctx, -1, -2)  # (..., n_head, T, T) = dprobs, key-major
    dscores_t -= _ones_row(t, dy.dtype) @ (dscores_t * act.probs_t)  # (..., 1, T) sums
    dscores_t *= act.probs_t  # softmax backward
    dq = np.swapaxes(dscores_t, -1, -2) @ act.k  # (..., n_head, T, hd)
    dq *= dy.dtype.type(1.0 / np.sqrt(hd))
    dk = dscores_t @ act.q  # (..., n_head, T, hd); q is already scaled
    dqkv = np.concatenate([_merge(dq), _merge(dk), _merge(dv)], axis=-1)  # (..., T, 3H)
    dw_qkv = act.x.reshape(-1, h).T @ dqkv.reshape(-1, 3 * h)  # (H, 3H)
    return dqkv @ w_qkv.T, dw_qkv, dw_o


def attention_forward_kv(
    x: Array, w_qkv: Array, w_o: Array, num_heads: int, keys: Array, values: Array, start: int
) -> Array:
    """Attention for S new positions `start…start+S−1` using stored keys and values.

    Writes this call's K/V rows into `keys`/`values` [max_seq_len, H] (one cache layer, in
    place) at rows start…start+S−1, then attends over rows 0…start+S−1 with the causal rule.

    Args:
        x: the new positions' inputs, [S, H].
        w_qkv, w_o, num_heads: as `attention_forward`.
        keys, values: the cache layer's storage, [max_seq_len, H]; the caller checks room.
        start: position of x[0].

    Returns:
        y [S, H], equal to rows start… of an uncached forward over the whole sequence.
    """
    s, h = x.shape
    end = start + s
    qkv = x @ w_qkv  # (S, 3H)
    keys[start:end] = qkv[:, h : 2 * h]
    values[start:end] = qkv[:, 2 * h :]
    q = _heads(qkv[:, :h], num_heads) * x.dtype.type(1.0 / np.sqrt(h // num_heads))
    k = _heads(keys[:end], num_heads)  # (n_head, T, hd)
    v = _heads(values[:end], num_heads)  # (n_head, T, hd)
    mask = causal_mask_array(s, end, x.dtype) if s > 1 else None  # (S, T)
    ctx, _ = _attend(q, k, v, mask)  # (n_head, S, hd)
    return _merge(ctx) @ w_o


class MultiHeadAttention(Module):
    """Multi-head self-attention with `w_q`, `w_k`, `w_v`, `w_o` of shape [H, H].

    Args:
        hidden_dim: H, the model width.
        num_heads: number of heads; must divide `hidden_dim`.

    Raises:
        TypeError: if a size is not an int.
        ValueError: if a size is not positive or `hidden_dim % num_heads != 0`.

    Example:
        >>> mha = MultiHeadAttention(8, 2)
        >>> mha.init_weights(np.random.default_rng(0))
        >>> mha.forward(np.zeros((3, 8), np.float32), create_causal_mask(3)).shape
        (3, 8)
    """

    def __init__(self, hidden_dim: int, num_heads: int) -> None:
        self.hidden_dim = positive_int(hidden_dim, "hidden_dim")
        self.num_heads = positive_int(num_heads, "num_heads")
        if self.hidden_dim % self.num_heads:
            raise ValueError(
                f"hidden_dim ({hidden_dim}) must be divisible by num_heads ({num_heads})"
            )
        self.head_dim = self.hidden_dim // self.num_heads
        self.scale = 1.0 / float(np.sqrt(self.head_dim))
        shape = (self.hidden_dim, self.hidden_dim)
        self.w_q, self.w_k, self.w_v, self.w_o = (tensor_zeros(shape) for _ in range(4))

    def _members(self) -> list[tuple[str, Member]]:
        return [("w_q", self.w_q), ("w_k", self.w_k), ("w_v", self.w_v), ("w_o", self.w_o)]

    def init_weights(self, rng: np.random.Generator, std: float = 0.02) -> None:
        """In place: draw W_q, W_k, W_v, W_o (in that order) from N(0, std²)."""
        check_rng(rng)
        for w in (self.w_q, self.w_k, self.w_v, self.w_o):
            array_of(w)[...] = rng.normal(0.0, std, size=w.shape)

    def fused_qkv(self) -> NDArray[np.float32]:
        """[W_q | W_k | W_v] as one new [H, 3H] array (one matmul instead of three)."""
        return np.concatenate(
            [array_of(self.w_q), array_of(self.w_k), array_of(self.w_v)], axis=1
        )  # (H, 3H)

    def forward(self, x: Any, mask: Any = None) -> Tensor:
        """Attention over `x` [S, H]; returns a new [S, H] Tensor. `x` is not modified.

        Args:
            x: input rows, [S, H].
            mask: additive [S, S] mask, or None for no mask.

        Raises:
            TypeError: if `x` or `mask` is not a Tensor or numeric array.
            ValueError: if `x` is not [S, H] or `mask` is not [S, S].
        """
        xs = as_tensor(x, "x").numpy()
        if xs.ndim != 2 or xs.shape[1] != self.hidden_dim:
            raise ValueError(f"x must be [S, {self.hidden_dim}], got shape {xs.shape}")
        s = xs.shape[0]
        m = None
        if mask is not None:
            m = as_tensor(mask, "mask").numpy()
            if m.shape != (s, s):
                raise ValueError(f"mask must be [{s}, {s}] for S={s}, got shape {m.shape}")
        x32 = xs.astype(np.float32, copy=False)
        y, _ = attention_forward(x32, self.fused_qkv(), array_of(self.w_o), self.num_heads, m)
        return Tensor(np.ascontiguousarray(y, np.float32).reshape(-1), y.shape)
