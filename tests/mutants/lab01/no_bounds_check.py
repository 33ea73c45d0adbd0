"""Mutant: no bounds check on the index.

No bounds check: an index outside [0, dim) reads or writes whatever storage cell its
position lands on.
"""

# zh: 没有检查下标是否越界
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
        pos += int(i) * stride
    return pos
