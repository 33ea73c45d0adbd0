"""Mutant: softmax reads the flat storage x.data instead of the tensor.

Reads x.data, the whole flat storage, instead of the tensor's own elements: wrong for a
strided view.
"""

# zh: softmax 读的是整个扁平存储 x.data，不是张量自己的元素
# fails: softmax_values

import numpy as np

from framework.tensor import Tensor, as_tensor, tensor_from


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = as_tensor(x, "x")
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    v = xt.data
    e = np.exp(v - v.max())
    return tensor_from(e / e.sum())
