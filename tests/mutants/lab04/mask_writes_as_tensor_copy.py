"""Mutant: apply_mask writes into as_tensor(scores), a copy when scores is a float64 ndarray."""
# zh: 写进了 as_tensor(scores)，而 float64 的 ndarray 会被它复制一份
# blind: arrays

# fails: mask_causal, accepts_arrays

from framework import Tensor, as_tensor


def apply_mask(scores: Tensor, mask: Tensor) -> None:
    """In place: scores += mask (shapes must match exactly)."""
    st, mt = as_tensor(scores, "scores"), as_tensor(mask, "mask")
    if st.shape != mt.shape:
        raise ValueError(f"scores is {st.shape} but mask is {mt.shape}")
    view = st.numpy()  # the bug: for a float64 ndarray this is a float32 copy's memory
    view += mt.numpy()
