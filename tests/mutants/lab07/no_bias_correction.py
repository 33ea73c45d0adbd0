"""Mutant: Adam without bias correction: the first steps are ~√(1-β₂)/(1-β₁) times too small."""
# zh: Adam 没有做偏差修正：开头几步的步长太小

# fails: adam_first, adam_steps, adam_decay

import numpy as np

from framework import Tensor, as_tensor


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> None:
    """AdamW, but m and v are used as they are."""
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy()
    if g.shape != p.shape or mm.shape != p.shape or vv.shape != p.shape or t < 1:
        raise ValueError("shapes differ or t < 1")
    p -= lr * weight_decay * p
    mm[...] = beta1 * mm + (1 - beta1) * g
    vv[...] = beta2 * vv + (1 - beta2) * g * g
    p -= lr * mm / (np.sqrt(vv) + eps)
