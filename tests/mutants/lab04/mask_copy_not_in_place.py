"""Mutant: returns scores + mask as a new tensor; the caller's scores never change."""
# zh: 把 scores + mask 作为新张量返回，调用者的 scores 没变

# fails: mask_causal, mask_adds, softmax_stable, chain_causal, against_framework

import numpy as np

from framework import Tensor, as_tensor, tensor_from


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
    return tensor_from(view + mt.numpy())  # type: ignore[return-value]
