"""Mutant: residual_add writes a = a + b, which rebinds a local name and leaves a as it was."""
# zh: residual_add 写了 a = a + b，只是重新绑定了局部变量，a 本身没变

# fails: residual_inplace, block_reference

import numpy as np

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    at, bt = as_tensor(a, "a"), as_tensor(b, "b")
    if at.shape != bt.shape:
        raise ValueError(f"a is {at.shape} but b is {bt.shape}")
    a = np.add(at.numpy(), bt.numpy())  # noqa: F841 - the bug: a new array, not a's memory
