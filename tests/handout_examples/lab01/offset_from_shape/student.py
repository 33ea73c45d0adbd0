"""Handout example: the position comes from the shape (i·shape[1] + j), not the strides.

The whole lab01 is solved, except that t.strides and t.offset are never read.
"""

from __future__ import annotations

import numpy as np

from framework.tensor import Tensor, as_tensor, tensor_from


def _flat_position(t: Tensor, index: tuple[int, ...]) -> int:
    """offset + Σ index[d]·strides[d], after checking the index against the shape."""
    if not isinstance(index, tuple | list):
        raise TypeError(f"index must be a tuple of ints, not {type(index).__name__}")
    if len(index) != t.ndim:
        raise IndexError(
            f"index must have {t.ndim} entries (one per dimension of shape {t.shape}), "
            f"got {tuple(index)}"
        )
    pos = 0
    for d, (i, dim) in enumerate(zip(index, t.shape, strict=True)):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise TypeError(f"index[{d}] must be an int, got {i!r}")
        if not 0 <= i < dim:
            raise IndexError(f"index[{d}] = {i} is outside [0, {dim}) for shape {t.shape}")
        pos = pos * dim + int(i)  # i·shape[1] + j, generalised: ignores strides and offset
    return pos


def tensor_get(t: Tensor, index: tuple[int, ...]) -> float:
    """Read one element through the strides: data[offset + Σ index[d]·strides[d]]."""
    tt = as_tensor(t, "t")
    return float(tt.data[_flat_position(tt, index)])


def tensor_set(t: Tensor, index: tuple[int, ...], value: float) -> None:
    """In place: write one element through the strides (views write into shared data)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"t must be a Tensor, not {type(t).__name__}")
    t.data[_flat_position(t, index)] = value


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = as_tensor(x, "x")
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max())  # every exponent is <= 0: no overflow
    return tensor_from(e / e.sum())
