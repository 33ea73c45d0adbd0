"""Mutant: softmax overwrites its input and returns it.

Computes the softmax in place in the input's storage and returns the input itself, so the
caller's tensor is changed.
"""

# zh: softmax 原地改写了输入并返回它
# fails: softmax_values

import numpy as np

from framework.tensor import Tensor, as_tensor


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = as_tensor(x, "x")
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    v = xt.numpy()
    v -= v.max()
    np.exp(v, out=v)
    v /= v.sum()
    return xt
