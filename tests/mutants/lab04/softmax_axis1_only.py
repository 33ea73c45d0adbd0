"""Mutant: hard-codes axis=1: right for 2-D input only."""
# zh: 写死了 axis=1：只对 2 维输入正确

# fails: softmax_ndim

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max(axis=1, keepdims=True))
    return tensor_from(e / e.sum(axis=1, keepdims=True))
