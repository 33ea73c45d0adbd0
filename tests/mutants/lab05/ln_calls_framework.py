"""Mutant: layernorm hands the work to the framework's LayerNorm instead of writing it."""
# zh: layernorm 直接调用框架的 LayerNorm，没有自己写公式

# fails: layernorm_formula, layernorm_eps, layernorm_shapes, accepts_arrays, strided_views

from framework import Tensor, as_tensor
from framework.layernorm import LayerNorm


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    g = as_tensor(gamma, "gamma")
    ln = LayerNorm(g.shape[0], eps)
    ln.gamma, ln.beta = g, as_tensor(beta, "beta")
    return ln.forward(x)
