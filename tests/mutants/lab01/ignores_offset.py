"""Mutant: the position ignores t.offset.

t.offset is ignored: the position starts at 0, so a view that does not start at data[0]
reads and writes the wrong cells.
"""

# zh: 算位置时漏了 t.offset，从 0 开始数
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
    for d, (i, dim, stride) in enumerate(zip(index, t.shape, t.strides, strict=True)):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise TypeError(f"index[{d}] must be an int, got {i!r}")
        if not 0 <= i < dim:
            raise IndexError(f"index[{d}] = {i} is outside [0, {dim}) for shape {t.shape}")
        pos += int(i) * stride
    return pos
