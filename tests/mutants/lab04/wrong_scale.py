"""Mutant: ignores the scale argument and always uses 1/√hd."""
# zh: 忽略了 scale 参数，总是用 1/√hd

# fails: scores_identity, scores_general, worked_example

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    return tensor_from((qt.numpy() @ kt.numpy().T) / np.sqrt(qt.shape[1]))
