"""Mutant: strides paired with the wrong axes.

The strides are paired with the wrong axes (index[d] · strides[ndim - 1 - d]).
"""

# zh: strides 与维度配错了（index[d] 配 strides[ndim-1-d]）
# fails: get_2d, get_ndim, get_views, set_c_check, set_distinct, set_views, accepts_arrays

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
    pos = t.offset
    for d, (i, dim, stride) in enumerate(zip(index, t.shape, t.strides, strict=True)):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise TypeError(f"index[{d}] must be an int, got {i!r}")
        if not 0 <= i < dim:
            raise IndexError(f"index[{d}] = {i} is outside [0, {dim}) for shape {t.shape}")
        pos += int(i) * t.strides[t.ndim - 1 - d]
    return pos
