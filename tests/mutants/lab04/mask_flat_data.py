"""Mutant: apply_mask adds mask.data to scores.data cell by cell, ignoring strides and offset."""
# zh: 按 data 的顺序逐个把 mask 加到 scores 上，忽略了 strides 和 offset
# blind: views

# fails: strided_views

import numpy as np

from framework import Tensor, as_tensor


def apply_mask(scores: Tensor, mask: Tensor) -> None:
    """In place: scores += mask (shapes must match exactly)."""
    mt = as_tensor(mask, "mask")
    st = scores if isinstance(scores, Tensor) else None
    if st is None:
        if not isinstance(scores, np.ndarray):
            raise TypeError(f"scores must be a Tensor or ndarray, not {type(scores).__name__}")
        if scores.shape != mt.shape:
            raise ValueError(f"scores is {scores.shape} but mask is {mt.shape}")
        scores += mt.numpy()
        return
    if st.shape != mt.shape:
        raise ValueError(f"scores is {st.shape} but mask is {mt.shape}")
    for i in range(st.size):
        st.data[i] += mt.data[i]
