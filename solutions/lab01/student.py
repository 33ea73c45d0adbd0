"""Lab01 — tensors and math ops: read and write one element through strides, then softmax.

A `Tensor` keeps its numbers in one flat float32 array, `t.data`. Three more fields say
where element `index` lives in it:

    position = t.offset + Σ_d index[d] · t.strides[d]

For a new [2, 3] tensor the strides are (3, 1) and the offset is 0, so (1, 2) lives at
0 + 1·3 + 2·1 = 5. Its transpose `t.T` is a *view*: the same `data` with shape [3, 2] and
strides (1, 3). Element (1, 0) of `t.T` lives at 1·1 + 0·3 = 1 — it is t's (0, 1). An
offset computed from the shape alone (i·shape[1] + j = 1·2 + 0 = 2) reads the wrong number,
and so does one that forgets `t.offset`; the checks use such views on purpose.

Worked example:
    t = tensor_from([[0, 1, 2], [10, 11, 12]])     # shape (2, 3), strides (3, 1)
    tensor_get(t, (1, 2))    -> 12.0               # data[0 + 1·3 + 2·1] = data[5]
    tensor_get(t.T, (1, 0))  -> 1.0                # data[0 + 1·1 + 0·3] = data[1]

Run `make test` in this folder after every change; `TASK.md` explains each function.
For `tensor_get` / `tensor_set` use `t.data`, `t.shape`, `t.strides` and `t.offset`
yourself (numpy's `t.numpy()[index]` wraps negative indices around, which we forbid).
In `softmax_stable` you may use numpy, but not `framework.math_ops.softmax`.
"""

from __future__ import annotations

import numpy as np  # noqa: F401

from framework.tensor import Tensor, as_tensor, tensor_from, tensor_zeros  # noqa: F401


# BEGIN SOLUTION
def _flat_position(t: Tensor, index: tuple[int, ...]) -> int:
    """offset + Σ index[d]·strides[d], after checking the index against the shape."""
    if not isinstance(index, tuple | list):
        raise TypeError(f"index must be a tuple of ints, not {type(index).__name__}")
    if len(index) != t.ndim:
        raise IndexError(
            f"index must have {t.ndim} entries (one per dimension of shape {t.shape}), "
            f"got {tuple(index)}"
        )
    pos = t.offset
    for d, (i, dim, stride) in enumerate(zip(index, t.shape, t.strides, strict=True)):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise TypeError(f"index[{d}] must be an int, got {i!r}")
        if not 0 <= i < dim:
            raise IndexError(f"index[{d}] = {i} is outside [0, {dim}) for shape {t.shape}")
        pos += int(i) * stride
    return pos


# END SOLUTION


def tensor_get(t: Tensor, index: tuple[int, ...]) -> float:
    """Read one element: t.data[t.offset + Σ_d index[d] · t.strides[d]].

    Works for any ndim and for views (`t.T`, `t.permute(...)`, a non-zero `t.offset`):
    use the tensor's own strides and offset, never strides recomputed from the shape.

    Args:
        t: a Tensor (a numpy array is accepted too: convert it with `as_tensor`).
        index: one int per dimension, e.g. (i, j) for a 2-D tensor.

    Returns:
        The element as a Python float. `t` is not modified.

    Raises:
        IndexError: if len(index) != t.ndim, or some index[d] is outside [0, t.shape[d]).
            Negative indices are out of range: there is no wrap-around.
    """
    # BEGIN SOLUTION: check the index length and every bound, then read data at the position.
    tt = as_tensor(t, "t")
    return float(tt.data[_flat_position(tt, index)])
    # END SOLUTION


def tensor_set(t: Tensor, index: tuple[int, ...], value: float) -> None:
    """In place: t.data[t.offset + Σ_d index[d] · t.strides[d]] = value.

    Writing through a view changes the storage it shares with other tensors: after
    `tensor_set(t.T, (j, i), v)`, `tensor_get(t, (i, j))` reads v.

    Args:
        t: a Tensor, modified in place (only the one element changes).
        index: one int per dimension.
        value: the number to store (kept as float32).

    Returns:
        None — the result is `t` itself.

    Raises:
        IndexError: same rules as `tensor_get`; on error nothing is written.
    """
    # BEGIN SOLUTION: same position as tensor_get, but write `value` into t.data.
    if not isinstance(t, Tensor):
        raise TypeError(f"t must be a Tensor, not {type(t).__name__}")
    t.data[_flat_position(t, index)] = value
    # END SOLUTION


def softmax_stable(x: Tensor) -> Tensor:
    """Softmax of a 1-D tensor, with the maximum subtracted first.

    out[i] = exp(x[i] - m) / Σ_j exp(x[j] - m), where m = max_j x[j]. Subtracting m changes
    nothing mathematically, but keeps every exponent <= 0, so inputs like ±1e4 stay finite
    (exp(1e4) alone would overflow to inf, and inf / inf is NaN).

    Args:
        x: a 1-D Tensor with at least one element (a numpy array is accepted too).

    Returns:
        A new Tensor of the same shape, all values in [0, 1], summing to 1. `x` is left
        unchanged.

    Raises:
        ValueError: if x is not 1-D, or is empty.
    """
    # BEGIN SOLUTION: find the max, exponentiate x - max, divide by the sum.
    xt = as_tensor(x, "x")
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max())  # every exponent is <= 0: no overflow
    return tensor_from(e / e.sum())
    # END SOLUTION
