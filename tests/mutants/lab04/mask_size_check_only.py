"""Mutant: checks only that the sizes agree, so a [3, 2] mask is added to [2, 3] scores.

The C version could only compare element counts; here the shapes are known.
"""

# fails: mask_adds

import numpy as np

from framework import Tensor, as_tensor


def apply_mask(scores: Tensor, mask: Tensor) -> None:
    """In place: scores += mask (shapes must match exactly)."""
    mt = as_tensor(mask, "mask")
    if isinstance(scores, np.ndarray):
        view = scores
    elif isinstance(scores, Tensor):
        view = scores.numpy()
    else:
        raise TypeError(f"scores must be a Tensor or ndarray, not {type(scores).__name__}")
    if view.size != mt.size:
        raise ValueError(f"scores has {view.size} elements but mask has {mt.size}")
    view += mt.numpy().reshape(view.shape)
