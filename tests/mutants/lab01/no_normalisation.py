"""Mutant: softmax forgets to divide by the sum.

Forgets to divide by the sum: returns exp(x - max), which does not sum to 1.
"""

# zh: softmax 忘了除以总和
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
    e = np.exp(v - v.max())  # every exponent is <= 0: no overflow
    return tensor_from(e)
