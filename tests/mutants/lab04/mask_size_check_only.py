"""Mutant: checks only that the sizes agree, so a [3, 2] mask is added to [2, 3] scores."""
# zh: 只比较元素个数，不比较形状：[3, 2] 的掩码被加到 [2, 3] 的 scores 上

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
    if view.size != mt.size:  # the C version could only compare element counts
        raise ValueError(f"scores has {view.size} elements but mask has {mt.size}")
    view += mt.numpy().reshape(view.shape)
