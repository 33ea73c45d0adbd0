"""Mutant: layernorm reads x.data as if it were row-major, ignoring strides and offset."""
# zh: layernorm 把 x.data 当成按行排列来读，忽略了 strides 和 offset
# blind: views

# fails: strided_views

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    xt, g, b = as_tensor(x, "x"), as_tensor(gamma, "gamma"), as_tensor(beta, "beta")
    h = xt.shape[-1]
    for name, p in (("gamma", g), ("beta", b)):
        if p.shape != (h,):
            raise ValueError(f"{name} must have shape ({h},), got {p.shape}")
    v = xt.data[: xt.size].reshape(xt.shape)
    mean = v.mean(axis=-1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
    return tensor_from((v - mean) / np.sqrt(var + eps) * g.numpy() + b.numpy())
