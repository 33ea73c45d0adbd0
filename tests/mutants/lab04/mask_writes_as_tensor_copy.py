"""Mutant: apply_mask writes into as_tensor(scores), a copy when scores is a float64 ndarray."""

# fails: mask_causal

from framework import Tensor, as_tensor


def apply_mask(scores: Tensor, mask: Tensor) -> None:
    """In place: scores += mask (shapes must match exactly)."""
    st, mt = as_tensor(scores, "scores"), as_tensor(mask, "mask")
    if st.shape != mt.shape:
        raise ValueError(f"scores is {st.shape} but mask is {mt.shape}")
    view = st.numpy()  # the bug: for a float64 ndarray this is a float32 copy's memory
    view += mt.numpy()
