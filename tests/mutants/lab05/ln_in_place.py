"""Mutant: layernorm subtracts the mean in place (v -= mean), through a view of x."""
# zh: layernorm 用 v -= mean 原地减均值，通过视图改了调用者的 x

# fails: layernorm_formula, block_reference

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    xt, g, b = as_tensor(x, "x"), as_tensor(gamma, "gamma"), as_tensor(beta, "beta")
    h = xt.shape[-1]
    for name, p in (("gamma", g), ("beta", b)):
        if p.shape != (h,):
            raise ValueError(f"{name} must have shape ({h},), got {p.shape}")
    v = xt.numpy()
    v -= v.mean(axis=-1, keepdims=True)
    var = (v**2).mean(axis=-1, keepdims=True)
    return tensor_from(v / np.sqrt(var + eps) * g.numpy() + b.numpy())
