"""Mutant: updates everything in place but also returns param (the contract says None)."""
# zh: 原地更新之后还返回了 param（约定是返回 None）

# fails: adam_first

from framework import Tensor


_solution_adam_step = adam_step


def adam_step(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, t: int, lr: float,
              beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
              weight_decay: float = 0.0) -> Tensor:
    """AdamW in place, returning param."""
    _solution_adam_step(param, grad, m, v, t, lr, beta1, beta2, eps, weight_decay)
    return param
