"""Mutant: layernorm does not check gamma and beta, so numpy broadcasts wrong shapes."""
# zh: layernorm 不检查 gamma、beta 的形状，错误的形状被 numpy 广播了

# fails: layernorm_shapes

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    v = as_tensor(x, "x").numpy()
    mean = v.mean(axis=-1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
    g, b = as_tensor(gamma, "gamma").numpy(), as_tensor(beta, "beta").numpy()
    return tensor_from((v - mean) / np.sqrt(var + eps) * g + b)
