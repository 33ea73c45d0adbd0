"""Mutant: accumulates into the mask (np.add out= the wrong argument), then copies."""
# zh: 把和累加进了 mask（np.add 的 out= 写错了参数），再复制回 scores

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
    if view.shape != mt.shape:
        raise ValueError(f"scores is {view.shape} but mask is {mt.shape}")
    m = mt.numpy()
    np.add(view, m, out=m)
    view[...] = m
