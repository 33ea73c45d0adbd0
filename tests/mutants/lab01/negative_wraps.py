"""Mutant: a negative index wraps around instead of raising IndexError.

Only the upper bound is checked, so a negative index silently wraps around to another
element.
"""

# zh: 负下标会回绕，没有 raise IndexError
# fails: get_errors, set_errors

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
        if i >= dim:
            raise IndexError(f"index[{d}] = {i} is outside [0, {dim}) for shape {t.shape}")
        pos += int(i) * stride
    return pos
