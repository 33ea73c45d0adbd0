"""Mutant: softmax without subtracting the max: exp overflows to inf and gives NaN."""
# zh: softmax 没有减去最大值：exp 溢出成 inf，得到 NaN

# fails: softmax_stable

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v)
    return tensor_from(e / e.sum(axis=-1, keepdims=True))
