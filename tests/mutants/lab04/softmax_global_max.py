"""Mutant: subtracts the maximum of the whole tensor, not of each row: far rows underflow to 0/0."""
# zh: 减去的是整个张量的最大值而不是每一行的：较低的行下溢成 0/0

# fails: softmax_stable

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max())
    return tensor_from(e / e.sum(axis=-1, keepdims=True))
