"""Mutant: scales the caller's gradient in place while building m (g *= 1 - β₁)."""
# zh: 计算 m 时原地缩放了调用者的梯度（g *= 1 − β₁）

# fails: adam_first

import numpy as np

from framework import Tensor, as_tensor


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> None:
    """AdamW that reuses grad's memory as scratch."""
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy()
    if g.shape != p.shape or mm.shape != p.shape or vv.shape != p.shape or t < 1:
        raise ValueError("shapes differ or t < 1")
    p -= lr * weight_decay * p
    vv[...] = beta2 * vv + (1 - beta2) * g * g
    mm *= beta1
    g *= 1 - beta1
    mm += g
    p -= lr * (mm / (1 - beta1**t)) / (np.sqrt(vv / (1 - beta2**t)) + eps)
