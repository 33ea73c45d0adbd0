"""Mutant: attention_scores reads Q as q.data.reshape(q.shape), ignoring strides and offset."""
# zh: 用 q.data.reshape(q.shape) 读 Q，忽略了 strides 和 offset
# blind: views

# fails: strided_views

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    qv = qt.data[: qt.size].reshape(qt.shape)
    return tensor_from(np.float32(scale) * (qv @ kt.numpy().T))  # (S, T)
