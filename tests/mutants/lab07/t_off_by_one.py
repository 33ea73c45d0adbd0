"""Mutant: bias corrections with t + 1 (counting the step as if it had already been taken)."""
# zh: 偏差修正用了 t + 1（好像这一步已经走过了）

# fails: adam_first, adam_steps, adam_decay

import numpy as np

from framework import Tensor, as_tensor


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> None:
    """AdamW with 1 - β^(t+1) in the corrections."""
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy()
    if g.shape != p.shape or mm.shape != p.shape or vv.shape != p.shape or t < 1:
        raise ValueError("shapes differ or t < 1")
    p -= lr * weight_decay * p
    mm[...] = beta1 * mm + (1 - beta1) * g
    vv[...] = beta2 * vv + (1 - beta2) * g * g
    p -= lr * (mm / (1 - beta1 ** (t + 1))) / (np.sqrt(vv / (1 - beta2 ** (t + 1))) + eps)
