"""Mutant: residual_add loops over the flat data of both, ignoring strides and offset."""
# zh: residual_add 逐个遍历两者的 data，忽略了 strides 和 offset
# blind: views

# fails: residual_inplace, accepts_arrays, strided_views

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    at, bt = as_tensor(a, "a"), as_tensor(b, "b")
    if at.shape != bt.shape:
        raise ValueError(f"a is {at.shape} but b is {bt.shape}")
    for i in range(at.size):
        at.data[i] += bt.data[i]
