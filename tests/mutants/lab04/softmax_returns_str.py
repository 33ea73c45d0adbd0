"""Mutant: softmax returns a description string instead of a Tensor."""
# zh: softmax 返回了一段描述字符串而不是 Tensor

# fails: softmax_basic, softmax_stable, softmax_ndim, chain_causal, worked_example, against_framework, accepts_arrays, strided_views

from framework import Tensor, as_tensor


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    xt = as_tensor(x, "x")
    return f"softmax of a tensor of shape {xt.shape}"  # type: ignore[return-value]
