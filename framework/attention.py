"""Multi-head causal self-attention, forward (backward joins in lab07).

`MultiHeadAttention` holds four [H, H] projections stored [in, out] (y = x @ W, no biases).
Head h uses columns [h·hd, (h+1)·hd) of Q, K and V; each head computes
softmax(q @ kᵀ · scale + mask) @ v with scale = 1/√hd, and the heads' outputs are
concatenated back into [S, H] before the output projection W_o.

Masks are additive: 0 keeps a position, -1e9 blocks it (`create_causal_mask`). -1e9 rather
than -inf: a row that is entirely blocked then becomes uniform instead of NaN.

Deliberately not here: dropout, biases, rotary embeddings, and the KV cache (lab11).

Example:
    >>> create_causal_mask(3).tolist()[0]
    [0.0, -1000000000.0, -1000000000.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from framework.math_ops import _softmax_np
from framework.tensor import Tensor, as_tensor, tensor_from, tensor_zeros

__all__ = ["MASK_VALUE", "AttentionCache", "MultiHeadAttention", "create_causal_mask"]

MASK_VALUE = -1e9


def create_causal_mask(seq_len: int) -> Tensor:
    """[S, S] additive mask: 0 where j <= i, -1e9 where j > i (position i sees 0..i).

    Raises:
        ValueError: if `seq_len` is not a positive int.
    """
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len <= 0:
        raise ValueError(f"seq_len must be a positive int, got {seq_len!r}")
    upper = np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
    return tensor_from(np.where(upper, MASK_VALUE, 0.0))  # (S, S)


@dataclass
class AttentionCache:
    """What one forward pass keeps for the backward pass.

    Attributes:
        x: input [S, H].
        q, k, v: projections [S, H] (heads side by side).
        attn: softmax weights per head [n_head, S, S].
        context: heads' outputs concatenated [S, H], before W_o.
    """

    x: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    attn: np.ndarray
    context: np.ndarray


class MultiHeadAttention:
    """Multi-head self-attention with W_q, W_k, W_v, W_o of shape [H, H].

    Args:
        hidden_dim: H, the model width.
        num_heads: number of heads; must divide `hidden_dim`.

    Raises:
        ValueError: if a size is not positive or `hidden_dim % num_heads != 0`.

    Example:
        >>> mha = MultiHeadAttention(8, 2)
        >>> mha.init_weights(np.random.default_rng(0))
        >>> mha.forward(np.zeros((3, 8), np.float32), create_causal_mask(3)).shape
        (3, 8)
    """

    def __init__(self, hidden_dim: int, num_heads: int) -> None:
        for name, val in (("hidden_dim", hidden_dim), ("num_heads", num_heads)):
            if isinstance(val, bool) or not isinstance(val, int) or val <= 0:
                raise ValueError(f"{name} must be a positive int, got {val!r}")
        if hidden_dim % num_heads:
            raise ValueError(
                f"hidden_dim ({hidden_dim}) must be divisible by num_heads ({num_heads})"
            )
        self.hidden_dim = hidden_dim
        self.num_heads = num_heads
        self.head_dim = hidden_dim // num_heads
        self.scale = 1.0 / float(np.sqrt(self.head_dim))
        self.w_q = tensor_zeros((hidden_dim, hidden_dim))
        self.w_k = tensor_zeros((hidden_dim, hidden_dim))
        self.w_v = tensor_zeros((hidden_dim, hidden_dim))
        self.w_o = tensor_zeros((hidden_dim, hidden_dim))

    def init_weights(self, rng: np.random.Generator, std: float = 0.02) -> None:
        """In place: draw W_q, W_k, W_v, W_o (in that order) from N(0, std²)."""
        for w in (self.w_q, self.w_k, self.w_v, self.w_o):
            w.numpy()[...] = rng.normal(0.0, std, size=w.shape)

    def num_params(self) -> int:
        """4·H² (there are no biases)."""
        return 4 * self.hidden_dim * self.hidden_dim

    def forward(
        self, x: Any, mask: Any = None, cache: list[AttentionCache] | None = None
    ) -> Tensor:
        """Attention over `x` [S, H]; returns [S, H]. `x` is not modified.

        Args:
            x: input rows, [S, H].
            mask: additive [S, S] mask, or None for no mask.
            cache: if a list is given, the intermediates are appended to it.

        Raises:
            ValueError: if `x` is not [S, H] or `mask` is not [S, S].
        """
        xt = as_tensor(x, "x")
        if xt.ndim != 2 or xt.shape[1] != self.hidden_dim:
            raise ValueError(f"x must be [S, {self.hidden_dim}], got shape {xt.shape}")
        xs = xt.numpy()
        s = xs.shape[0]
        m = None
        if mask is not None:
            m = as_tensor(mask, "mask").numpy()
            if m.shape != (s, s):
                raise ValueError(f"mask must be [{s}, {s}] for S={s}, got shape {m.shape}")
        nh, hd = self.num_heads, self.head_dim
        q = xs @ self.w_q.numpy()  # (S, H)
        k = xs @ self.w_k.numpy()  # (S, H)
        v = xs @ self.w_v.numpy()  # (S, H)
        qh = q.reshape(s, nh, hd).transpose(1, 0, 2)  # (n_head, S, hd)
        kh = k.reshape(s, nh, hd).transpose(1, 0, 2)  # (n_head, S, hd)
        vh = v.reshape(s, nh, hd).transpose(1, 0, 2)  # (n_head, S, hd)
        scores = (qh @ kh.transpose(0, 2, 1)) * np.float32(self.scale)  # (n_head, S, S)
        if m is not None:
            scores = scores + m  # (n_head, S, S), mask broadcast over heads
        attn = _softmax_np(scores).astype(np.float32)  # (n_head, S, S)
        ctx = (attn @ vh).transpose(1, 0, 2).reshape(s, self.hidden_dim)  # (S, H)
        out = ctx @ self.w_o.numpy()  # (S, H)
        if cache is not None:
            cache.append(AttentionCache(xs.copy(), q, k, v, attn, ctx))
        return tensor_from(out)
