"""Mutant: only the 2-D formula i*strides[0] + j*strides[1].

Only the C course's 2-D formula offset = i·strides[0] + j·strides[1]: a 1-D index fails and
the third index of a 3-D tensor is ignored.
"""

# zh: 只写了 2 维公式 i·strides[0] + j·strides[1]
# fails: get_ndim, get_views, set_distinct, set_views

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
    for d, (i, dim) in enumerate(zip(index, t.shape, strict=True)):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise TypeError(f"index[{d}] must be an int, got {i!r}")
        if not 0 <= i < dim:
            raise IndexError(f"index[{d}] = {i} is outside [0, {dim}) for shape {t.shape}")
    return t.offset + int(index[0]) * t.strides[0] + int(index[1]) * t.strides[1]
