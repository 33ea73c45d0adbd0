"""Mutant: writes out[j][i] instead of out[i][j]: returns k @ qᵀ, shape [T, S]."""
# zh: 写成了 out[j][i]：返回 k @ qᵀ，形状是 [T, S]

# fails: scores_general, against_framework, accepts_arrays, strided_views

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    return tensor_from(np.float32(scale) * (kt.numpy() @ qt.numpy().T))
