"""Mutant: adds first and checks the shapes afterwards: a failed call has already changed scores."""
# zh: 先把掩码加上去再检查形状：出错时 scores 已经被改了

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
    view += mt.numpy().reshape(view.shape)  # reshape succeeds whenever the sizes match
    if view.shape != mt.shape:
        raise ValueError(f"scores is {view.shape} but mask is {mt.shape}")
