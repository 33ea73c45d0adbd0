"""Mutant: normalises linearly, x / Σx, without exp."""
# zh: 按 x / Σx 线性归一化，没有取 exp

# fails: softmax_basic, softmax_stable, softmax_ndim, chain_causal, worked_example, against_framework

from framework import Tensor, as_tensor, tensor_from


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    return tensor_from(v / v.sum(axis=-1, keepdims=True))
