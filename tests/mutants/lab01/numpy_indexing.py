"""Mutant: get/set through numpy indexing t.numpy()[index].

Uses numpy indexing t.numpy()[index]: negative indices wrap around and a short index selects
a whole row.
"""

# zh: 用 numpy 下标 t.numpy()[index] 读写：负下标回绕，短下标取整行
# fails: get_errors, set_errors

from framework.tensor import Tensor, as_tensor


def tensor_get(t: Tensor, index: tuple[int, ...]) -> float:
    """Read one element through the strides: data[offset + Σ index[d]·strides[d]]."""
    return float(as_tensor(t, "t").numpy()[tuple(index)])


def tensor_set(t: Tensor, index: tuple[int, ...], value: float) -> None:
    """In place: write one element through the strides (views write into shared data)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"t must be a Tensor, not {type(t).__name__}")
    t.numpy()[tuple(index)] = value
