"""Mutant: L2 regularisation folded into the gradient (Adam + L2), not decoupled decay."""
# zh: 把 L2 正则加进了梯度（Adam + L2），而不是解耦的权重衰减

# fails: adam_steps, adam_decay

import numpy as np

from framework import Tensor, as_tensor


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> None:
    """Adam on grad + wd·param."""
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy() + weight_decay * p
    if g.shape != p.shape or mm.shape != p.shape or vv.shape != p.shape or t < 1:
        raise ValueError("shapes differ or t < 1")
    mm[...] = beta1 * mm + (1 - beta1) * g
    vv[...] = beta2 * vv + (1 - beta2) * g * g
    p -= lr * (mm / (1 - beta1**t)) / (np.sqrt(vv / (1 - beta2**t)) + eps)
