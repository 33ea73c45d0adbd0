"""Mutant: the position comes from the shape (i*shape[1] + j), not the strides.

The position is computed from the shape (i·shape[1] + j, row-major), not from t.strides and
t.offset.
"""

# zh: 位置由 shape 算出（i·shape[1] + j），没有用 strides 和 offset
# fails: get_views, set_views

import numpy as np

from framework.tensor import Tensor


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
