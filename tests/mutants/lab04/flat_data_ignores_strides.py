"""Mutant: reads k.data with row-major offsets from the shape, ignoring strides."""
# zh: 按形状算行主序下标去读 k.data，忽略了 strides
# blind: views

# fails: scores_general, strided_views

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    s_len, t_len, hd = qt.shape[0], kt.shape[0], qt.shape[1]
    out = np.zeros((s_len, t_len), dtype=np.float32)
    for i in range(s_len):
        for j in range(t_len):
            acc = 0.0
            for d in range(hd):
                acc += qt.data[i * hd + d] * kt.data[j * hd + d]
            out[i, j] = scale * acc
    return tensor_from(out)
