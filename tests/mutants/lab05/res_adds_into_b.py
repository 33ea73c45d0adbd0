"""Mutant: residual_add adds a into b instead of b into a."""
# zh: residual_add 把 a 加进了 b，而不是把 b 加进 a

# fails: residual_inplace, block_reference

import numpy as np

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    at = as_tensor(a, "a")
    view = b if isinstance(b, np.ndarray) else b.numpy()
    if view.shape != at.shape:
        raise ValueError(f"a is {at.shape} but b is {view.shape}")
    view += at.numpy()
