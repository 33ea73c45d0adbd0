"""Mutant: residual_add writes into as_tensor(a), a copy when a is a float64 ndarray."""

# fails: residual_inplace

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    at, bt = as_tensor(a, "a"), as_tensor(b, "b")
    if at.shape != bt.shape:
        raise ValueError(f"a is {at.shape} but b is {bt.shape}: shapes must be equal")
    view = at.numpy()  # the bug: for a float64 ndarray this is a float32 copy's memory
    view += bt.numpy()
