"""Mutant: assumes every argument is a Tensor and calls .numpy() on it, so ndarrays fail."""
# zh: 假定每个参数都是 Tensor 并调用 .numpy()，ndarray 输入就出错
# blind: arrays

# fails: mask_causal, accepts_arrays

import numpy as np

from framework import Tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = q, k
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    return tensor_from(np.float32(scale) * (qt.numpy() @ kt.numpy().T))


def apply_mask(scores: Tensor, mask: Tensor) -> None:
    """In place: scores += mask (shapes must match exactly)."""
    mt = mask
    view = scores.numpy()
    if view.shape != mt.shape:
        raise ValueError(f"scores is {view.shape} but mask is {mt.shape}")
    view += mt.numpy()


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = x
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max(axis=-1, keepdims=True))  # max subtraction: no overflow
    return tensor_from(e / e.sum(axis=-1, keepdims=True))
