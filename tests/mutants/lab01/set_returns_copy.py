"""Mutant: tensor_set writes into a copy and returns it.

tensor_set writes into a copy (t.numpy().copy()) and returns it: the caller's tensor never
changes.
"""

# zh: tensor_set 写进副本并返回它，原张量没变
# fails: set_c_check, set_distinct, set_views, set_errors

from framework.tensor import Tensor, tensor_from


def tensor_set(t: Tensor, index: tuple[int, ...], value: float) -> None:
    """In place: write one element through the strides (views write into shared data)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"t must be a Tensor, not {type(t).__name__}")
    arr = t.numpy().copy()
    arr[tuple(index)] = value
    return tensor_from(arr)
