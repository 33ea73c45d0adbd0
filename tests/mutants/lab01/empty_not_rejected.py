"""Mutant: softmax_stable returns an empty tensor for empty input.

A loop-style softmax that starts from max = -inf and returns an empty result for empty input
instead of raising ValueError.
"""

# zh: 空输入返回空张量，没有 raise ValueError
# fails: softmax_errors

import numpy as np

from framework.tensor import Tensor, as_tensor, tensor_from


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = as_tensor(x, "x")
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    values = [float(v) for v in xt.numpy()]
    m = -np.inf
    for v in values:
        m = max(m, v)
    exps = [float(np.exp(v - m)) for v in values]
    total = sum(exps)
    return tensor_from(np.array([e / total for e in exps], dtype=np.float32))
