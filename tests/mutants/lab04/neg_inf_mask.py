"""Mutant: turns the -1e9 of the mask into -inf, so a fully masked row becomes NaN."""
# zh: 把掩码里的 -1e9 换成 -inf，整行被屏蔽时变成 NaN

# fails: mask_causal, mask_adds, softmax_stable, accepts_arrays, strided_views

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
    if view.shape != mt.shape:
        raise ValueError(f"scores is {view.shape} but mask is {mt.shape}")
    m = mt.numpy()
    view += np.where(m <= -1e9, -np.inf, m)
