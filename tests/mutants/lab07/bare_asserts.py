"""Mutant: checks its arguments with assert (AssertionError, not ValueError), after the decay."""
# zh: 用 assert 检查参数（抛 AssertionError 而不是 ValueError），而且放在衰减之后

# fails: adam_in_place

import numpy as np

from framework import Tensor, as_tensor


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> None:
    """AdamW with asserts for argument checks."""
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy()
    p -= lr * weight_decay * p
    assert g.shape == p.shape and t >= 1
    mm[...] = beta1 * mm + (1 - beta1) * g
    vv[...] = beta2 * vv + (1 - beta2) * g * g
    p -= lr * (mm / (1 - beta1**t)) / (np.sqrt(vv / (1 - beta2**t)) + eps)
