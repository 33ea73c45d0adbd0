"""Mutant: normalises over the first axis (columns) instead of the last."""
# zh: 沿第一维（按列）归一化，而不是沿最后一维

# fails: softmax_basic, softmax_stable, softmax_ndim, chain_causal, against_framework

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max(axis=0, keepdims=True))
    return tensor_from(e / e.sum(axis=0, keepdims=True))
