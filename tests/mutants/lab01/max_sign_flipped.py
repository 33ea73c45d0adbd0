"""Mutant: softmax computes exp(max - x) instead of exp(x - max).

Subtracts the wrong way round, exp(max - x): the largest input gets the smallest
probability.
"""

# zh: 减反了：算的是 exp(max - x)，不是 exp(x - max)
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
    e = np.exp(v.max() - v)
    return tensor_from(e / e.sum())
