"""Mutant: softmax reads x.data.reshape(x.shape), ignoring strides and offset."""
# zh: 用 x.data.reshape(x.shape) 读输入，忽略了 strides 和 offset
# blind: views

# fails: strided_views

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.data[: xt.size].reshape(xt.shape)
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return tensor_from(e / e.sum(axis=-1, keepdims=True))
