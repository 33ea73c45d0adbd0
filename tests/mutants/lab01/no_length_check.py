"""Mutant: no check that the index has one entry per dimension.

The index length is not checked: zip() silently drops missing or extra entries.
"""

# zh: 没有检查下标的长度是否等于 ndim
# fails: get_errors, set_errors

import numpy as np

from framework.tensor import Tensor


def _flat_position(t: Tensor, index: tuple[int, ...]) -> int:
    """offset + Σ index[d]·strides[d], after checking the index against the shape."""
    if not isinstance(index, tuple | list):
        raise TypeError(f"index must be a tuple of ints, not {type(index).__name__}")
    pos = t.offset
    for d, (i, dim, stride) in enumerate(zip(index, t.shape, t.strides)):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise TypeError(f"index[{d}] must be an int, got {i!r}")
        if not 0 <= i < dim:
            raise IndexError(f"index[{d}] = {i} is outside [0, {dim}) for shape {t.shape}")
        pos += int(i) * stride
    return pos
