"""Mutant: updates param first and checks the shapes afterwards: an error leaves param changed."""
# zh: 先更新 param 再检查形状：出错时 param 已经被改了

# fails: adam_in_place

import numpy as np

from framework import Tensor, as_tensor


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> None:
    """AdamW that raises only once param is already decayed."""
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy()
    p -= lr * weight_decay * p + lr * 1e-3
    if g.shape != p.shape or mm.shape != p.shape or vv.shape != p.shape or t < 1:
        raise ValueError(f"grad has shape {g.shape}, param has {p.shape}; t = {t}")
    p += lr * 1e-3
    mm[...] = beta1 * mm + (1 - beta1) * g
    vv[...] = beta2 * vv + (1 - beta2) * g * g
    p -= lr * (mm / (1 - beta1**t)) / (np.sqrt(vv / (1 - beta2**t)) + eps)
