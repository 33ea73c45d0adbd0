"""Mutant: reads t.offset / t.data / x.numpy() directly, so a numpy array argument fails."""

# zh: 直接读 t.offset / t.data，没有先 as_tensor，numpy 数组参数会出错
# blind: arrays
# fails: accepts_arrays

import numpy as np

from framework.tensor import Tensor, tensor_from


def tensor_get(t: Tensor, index: tuple[int, ...]) -> float:
    """Read one element through the strides: data[offset + Σ index[d]·strides[d]]."""
    return float(t.data[_flat_position(t, index)])


def softmax_stable(x: Tensor) -> Tensor:
    """1-D softmax: exp(x - max) / Σ exp(x - max); x is left unchanged."""
    xt = x
    if xt.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {xt.shape}")
    if xt.size == 0:
        raise ValueError(f"x must not be empty, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max())  # every exponent is <= 0: no overflow
    return tensor_from(e / e.sum())
