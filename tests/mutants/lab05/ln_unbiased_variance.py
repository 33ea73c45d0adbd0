"""Mutant: layernorm divides the squared deviations by H - 1 (np.var with ddof=1)."""
# zh: layernorm 的方差除以 H - 1（无偏估计），而不是 H

# fails: layernorm_formula, layernorm_eps, block_reference

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
    var = np.var(v, axis=-1, keepdims=True, ddof=1)
    return tensor_from((v - mean) / np.sqrt(var + eps) * g.numpy() + b.numpy())
