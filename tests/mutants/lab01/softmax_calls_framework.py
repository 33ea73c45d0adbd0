"""Mutant: softmax_stable hands its work to the framework's softmax."""

# zh: softmax_stable 直接调用了框架的 softmax
# fails: softmax_c_checks, softmax_values, softmax_extreme, accepts_arrays

from framework import softmax
from framework.tensor import Tensor, as_tensor


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = as_tensor(x, "x")
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    return softmax(xt)
