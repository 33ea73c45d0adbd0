"""Mutant: slices k to q's head size and never checks k's shape or the ranks."""
# zh: 只按 q 的 hd 截取，从不检查 k 的形状和维数

# fails: scores_errors

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    hd = qt.shape[1]
    qv, kv = qt.numpy(), kt.numpy()[:, :hd]
    return tensor_from(np.float32(scale) * (qv @ kv.T))
