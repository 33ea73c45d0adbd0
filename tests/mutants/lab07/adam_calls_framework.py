"""Mutant: adam_step wraps the arrays in a framework AdamW and lets its step do the work."""
# zh: adam_step 把数组交给框架的 AdamW，让它的 step 代劳

# fails: adam_first, adam_steps, adam_decay, adam_in_place, arrays_and_views

import numpy as np

from framework import Tensor, as_tensor, tensor_from
from framework.optimizer import AdamW


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> None:
    """The framework's AdamW, one step, with this call's moments."""
    p = param if isinstance(param, Tensor) else as_tensor(param, "param")
    opt = AdamW([("w", p)], lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
                decay=lambda name, shape: True)
    opt.m["w"][...] = _writable(m, "m")
    opt.v["w"][...] = _writable(v, "v")
    opt.t = t - 1
    opt.step({"w": as_tensor(grad, "grad").numpy()})
    _writable(m, "m")[...] = opt.m["w"]
    _writable(v, "v")[...] = opt.v["w"]
