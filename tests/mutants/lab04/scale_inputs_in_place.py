"""Mutant: splits the scale between q and k by scaling them in place."""
# zh: 把 scale 拆到 q 和 k 上，原地缩放了输入

# fails: scores_general, chain_causal

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    root = np.float32(np.sqrt(scale))
    qv, kv = qt.numpy(), kt.numpy()
    qv *= root
    kv *= root
    return tensor_from(qv @ kv.T)
