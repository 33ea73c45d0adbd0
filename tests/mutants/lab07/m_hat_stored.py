"""Mutant: stores the bias-corrected m̂ and v̂ back into m and v (passes the C course's check)."""
# zh: 把偏差修正后的 m̂、v̂ 存回了 m 和 v

# fails: adam_first, adam_steps

import numpy as np

from framework import Tensor, as_tensor


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> None:
    """AdamW that keeps m̂ and v̂ as its moments."""
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy()
    if g.shape != p.shape or mm.shape != p.shape or vv.shape != p.shape or t < 1:
        raise ValueError("shapes differ or t < 1")
    p -= lr * weight_decay * p
    mm[...] = (beta1 * mm + (1 - beta1) * g) / (1 - beta1**t)
    vv[...] = (beta2 * vv + (1 - beta2) * g * g) / (1 - beta2**t)
    p -= lr * mm / (np.sqrt(vv) + eps)
