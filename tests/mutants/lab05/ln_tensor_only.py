"""Mutant: layernorm calls x.numpy() directly, so a numpy array argument fails."""
# zh: layernorm 直接调用 x.numpy()，x 是 numpy 数组时就出错
# blind: arrays

# fails: accepts_arrays

import numpy as np

from framework import Tensor, tensor_from


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    h = x.shape[-1]
    for name, p in (("gamma", gamma), ("beta", beta)):
        if p.shape != (h,):
            raise ValueError(f"{name} must have shape ({h},), got {p.shape}")
    v = x.numpy()
    mean = v.mean(axis=-1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
    return tensor_from((v - mean) / np.sqrt(var + eps) * gamma.numpy() + beta.numpy())
