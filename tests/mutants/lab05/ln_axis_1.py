"""Mutant: layernorm normalises along axis 1, which is the last axis only for 2-D input."""
# zh: layernorm 沿 axis=1 归一化，只有 2 维输入时那才是最后一维

# fails: layernorm_formula, layernorm_eps

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    xt, g, b = as_tensor(x, "x"), as_tensor(gamma, "gamma"), as_tensor(beta, "beta")
    h = xt.shape[-1]
    for name, p in (("gamma", g), ("beta", b)):
        if p.shape != (h,):
            raise ValueError(f"{name} must have shape ({h},), got {p.shape}")
    v = xt.numpy()
    mean = v.mean(axis=1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=1, keepdims=True)
    return tensor_from((v - mean) / np.sqrt(var + eps) * g.numpy() + b.numpy())
