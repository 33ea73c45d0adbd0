"""Mutant: softmax returns the framework's softmax."""
# zh: softmax 直接返回了框架的 softmax

# fails: softmax_basic, softmax_stable, softmax_ndim, chain_causal, worked_example, against_framework, accepts_arrays, strided_views

import framework
from framework import Tensor


def softmax(x: Tensor) -> Tensor:
    """Stable softmax over the last dimension; any ndim >= 1."""
    return framework.softmax(x)
