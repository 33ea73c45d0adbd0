"""Mutant: layernorm always uses eps = 1e-5 and ignores the eps it is given."""
# zh: layernorm 写死了 eps = 1e-5，忽略传进来的 eps

# fails: layernorm_eps

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    xt, g, b = as_tensor(x, "x"), as_tensor(gamma, "gamma"), as_tensor(beta, "beta")
    h = xt.shape[-1]
    for name, p in (("gamma", g), ("beta", b)):
        if p.shape != (h,):
            raise ValueError(f"{name} must have shape ({h},), got {p.shape}")
    v = xt.numpy()
    mean = v.mean(axis=-1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
    return tensor_from((v - mean) / np.sqrt(var + 1e-5) * g.numpy() + b.numpy())
