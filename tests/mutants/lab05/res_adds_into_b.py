"""Mutant: residual_add adds a into b instead of b into a."""

# fails: residual_inplace, block_reference, accepts_arrays, strided_views

import numpy as np

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    at = as_tensor(a, "a")
    view = b if isinstance(b, np.ndarray) else b.numpy()
    if view.shape != at.shape:
        raise ValueError(f"a is {at.shape} but b is {view.shape}")
    view += at.numpy()
