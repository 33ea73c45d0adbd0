"""Handout example: the reference solution, but returning numpy arrays, not Tensors.

A student may return either (the checks and every handout snippet accept both).
"""

from __future__ import annotations

import numpy as np

from framework import Tensor, as_tensor


def attention_scores(q: Tensor, k: Tensor, scale: float) -> np.ndarray:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    return np.float32(scale) * (qt.numpy() @ kt.numpy().T)  # (S, T)


def apply_mask(scores: Tensor, mask: Tensor) -> None:
    """In place: scores += mask (shapes must match exactly)."""
    mt = as_tensor(mask, "mask")
    if isinstance(scores, np.ndarray):
        view = scores
    elif isinstance(scores, Tensor):
        view = scores.numpy()
    else:
        raise TypeError(f"scores must be a Tensor or ndarray, not {type(scores).__name__}")
    if view.shape != mt.shape:
        raise ValueError(f"scores is {view.shape} but mask is {mt.shape}")
    view += mt.numpy()


def softmax(x: Tensor) -> np.ndarray:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max(axis=-1, keepdims=True))  # max subtraction: no overflow
    return e / e.sum(axis=-1, keepdims=True)
