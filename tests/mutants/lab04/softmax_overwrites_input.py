"""Mutant: computes the softmax in place in its input and returns that."""
# zh: 在输入上原地算 softmax 并把输入返回

# fails: softmax_basic

import numpy as np

from framework import Tensor, as_tensor


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    v -= v.max(axis=-1, keepdims=True)
    np.exp(v, out=v)
    v /= v.sum(axis=-1, keepdims=True)
    return xt
