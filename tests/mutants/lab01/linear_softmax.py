"""Mutant: softmax normalised linearly: x / sum(x).

Normalises linearly, x / Σx, instead of exp(x - max) / Σ exp(x - max): sums to 1 and is
increasing, but the values are wrong.
"""

# zh: softmax 写成线性归一化 x / Σx，没有用 exp
# fails: softmax_values, softmax_extreme

from framework.tensor import Tensor, as_tensor, tensor_from


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = as_tensor(x, "x")
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    v = xt.numpy()
    return tensor_from(v / v.sum())
