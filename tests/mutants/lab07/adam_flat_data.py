"""Mutant: adam_step writes through x.data[:size] as if every Tensor were row-major."""
# zh: adam_step 通过 x.data[:size] 写入，把每个 Tensor 都当作行主序

# fails: arrays_and_views
# blind: views

import numpy as np

from framework import Tensor


def _writable(x: Tensor | np.ndarray, name: str) -> np.ndarray:
    """A Tensor's storage, reshaped as if it started at 0 with row-major strides."""
    if isinstance(x, Tensor):
        return x.data[: x.size].reshape(x.shape)
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"{name} must be a Tensor or numpy array, not {type(x).__name__}")
