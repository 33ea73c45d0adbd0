"""Mutant: softmax without subtracting the max: overflow to NaN.

The max is not subtracted: exp(1000) overflows to inf and inf / inf = NaN.
"""

# zh: softmax 没有先减去最大值，大输入溢出成 NaN
# fails: softmax_c_checks, softmax_values, softmax_extreme

import numpy as np

from framework.tensor import Tensor, as_tensor, tensor_from


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = as_tensor(x, "x")
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v)
    return tensor_from(e / e.sum())
