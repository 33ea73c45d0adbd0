"""Mutant: layernorm adds eps to the standard deviation instead of under the square root."""
# zh: layernorm 把 eps 加在标准差上（√var + eps），而不是根号里面

# fails: layernorm_eps, block_reference

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
    std = v.std(axis=-1, keepdims=True)
    return tensor_from((v - mean) / (std + eps) * g.numpy() + b.numpy())
