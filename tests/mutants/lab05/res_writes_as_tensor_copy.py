"""Mutant: residual_add writes into as_tensor(a), a copy when a is a float64 ndarray."""
# zh: residual_add 写进了 as_tensor(a)，a 是 float64 数组时那是副本
# blind: arrays

# fails: residual_inplace, accepts_arrays

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    at, bt = as_tensor(a, "a"), as_tensor(b, "b")
    if at.shape != bt.shape:
        raise ValueError(f"a is {at.shape} but b is {bt.shape}: shapes must be equal")
    view = at.numpy()  # the bug: for a float64 ndarray this is a float32 copy's memory
    view += bt.numpy()
