"""Mutant: masks as one would after softmax, zeroing blocked scores instead of adding -1e9."""

# caught-by: mask_causal, mask_adds, chain_causal

from __future__ import annotations

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    return tensor_from(np.float32(scale) * (qt.numpy() @ kt.numpy().T))  # (S, T)


def apply_mask(scores: Tensor, mask: Tensor) -> None:
    """In place: scores += mask (shapes must match exactly)."""
    mt = as_tensor(mask, "mask")
    if not isinstance(scores, Tensor):
        raise TypeError(f"scores must be a Tensor, not {type(scores).__name__}")
    if scores.shape != mt.shape:
        raise ValueError(f"scores is {scores.shape} but mask is {mt.shape}")
    view = scores.numpy()
    view *= mt.numpy() == 0


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max(axis=-1, keepdims=True))  # max subtraction: no overflow
    return tensor_from(e / e.sum(axis=-1, keepdims=True))
