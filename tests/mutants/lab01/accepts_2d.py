"""Mutant: softmax_stable accepts 2-D input instead of raising ValueError.

Accepts any ndim and normalises over all the elements instead of rejecting input that is not
1-D.
"""

# zh: softmax_stable 接受 2 维输入，没有 raise ValueError
# fails: softmax_errors

import numpy as np

from framework.tensor import Tensor, as_tensor, tensor_from


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = as_tensor(x, "x")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max())  # every exponent is <= 0: no overflow
    return tensor_from(e / e.sum())
