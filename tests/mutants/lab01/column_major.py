"""Mutant: column-major position (first index fastest) instead of the strides.

Column-major position: the first index varies fastest (i + j·shape[0]), whatever the
strides.
"""

# zh: 位置按列主序算（第一个下标变得最快），没有用 strides
# fails: get_2d, get_ndim, get_views, set_distinct, set_views

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
    pos, step = t.offset, 1
    for d, (i, dim) in enumerate(zip(index, t.shape, strict=True)):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise TypeError(f"index[{d}] must be an int, got {i!r}")
        if not 0 <= i < dim:
            raise IndexError(f"index[{d}] = {i} is outside [0, {dim}) for shape {t.shape}")
        pos += int(i) * step  # column-major: i + j·rows
        step *= dim
    return pos
