"""Non-contiguous Tensor views with the same values, to test code against strides.

lab01 teaches that a Tensor's element `idx` lives at `data[offset + Σ idx[i]·strides[i]]`.
Code that reads `data` as if it were row-major passes every check built from fresh
tensors, so checks call student functions again with `strided(x)`: the same values laid
out column-major, every other cell of a larger storage, after an offset. The cells in
between hold NaN, so code that reads them produces NaN instead of a plausible number.

Example:
    >>> import numpy as np
    >>> v = strided(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> v.shape, v.strides, v.offset
    ((2, 3), (2, 4), 3)
    >>> bool((v.numpy() == np.arange(6).reshape(2, 3)).all())
    True
"""

from __future__ import annotations

import numpy as np

from framework.tensor import Tensor

__all__ = ["OFFSET", "outside", "strided"]

OFFSET = 3  # storage cells before the first element


def strided(x: Tensor | np.ndarray) -> Tensor:
    """An equal Tensor whose storage is column-major, gapped and offset (never contiguous)."""
    a = np.asarray(x.numpy() if isinstance(x, Tensor) else x, dtype=np.float32)
    shape = a.shape
    data = np.full(OFFSET + 2 * max(a.size, 1) + 1, np.nan, dtype=np.float32)
    rev = a.transpose(tuple(reversed(range(a.ndim))))
    data[OFFSET : OFFSET + 2 * a.size : 2] = np.ascontiguousarray(rev).ravel()
    strides = []
    step = 2
    for d in shape:  # column-major: the first axis varies fastest
        strides.append(step)
        step *= d
    return Tensor(data, shape, tuple(strides), OFFSET)


def outside(view: Tensor) -> np.ndarray:
    """The storage cells that do not belong to `view` (they must stay NaN)."""
    mask = np.ones(view.data.size, dtype=bool)
    if view.size:
        idx = np.indices(view.shape).reshape(view.ndim, -1)
        flat = view.offset + (np.asarray(view.strides)[:, None] * idx).sum(axis=0)
        mask[flat] = False
    return np.asarray(view.data[mask])
