"""Mutant: masks as one would after softmax, zeroing blocked scores instead of adding -1e9."""
# zh: 把被屏蔽的分数乘成 0（softmax 之后的做法），而不是加上 -1e9

# fails: mask_causal, mask_adds, softmax_stable, chain_causal, against_framework

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
    view *= mt.numpy() == 0
