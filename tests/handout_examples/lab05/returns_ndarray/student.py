"""Handout example: the lab05 solution, returning numpy arrays where it returned Tensors."""

from __future__ import annotations

import numpy as np

from framework.tensor import Tensor, as_tensor, tensor_from
from framework.transformer import TransformerBlock


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    """gamma · (x - mean) / sqrt(var + eps) + beta over the last dim, population variance."""
    xt, g, b = as_tensor(x, "x"), as_tensor(gamma, "gamma"), as_tensor(beta, "beta")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"x needs a non-empty last dimension, got shape {xt.shape}")
    h = xt.shape[-1]
    for name, p in (("gamma", g), ("beta", b)):
        if p.shape != (h,):
            raise ValueError(f"{name} must have shape ({h},) like x's last dim, got {p.shape}")
    v = xt.numpy()
    mean = v.mean(axis=-1, keepdims=True)  # (..., 1)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1), divided by H
    return (v - mean) / np.sqrt(var + eps) * g.numpy() + b.numpy()  # type: ignore[return-value]


def residual_add(a: Tensor, b: Tensor) -> None:
    """In place: a += b (shapes must match exactly)."""
    bt = as_tensor(b, "b")
    if isinstance(a, np.ndarray):
        view = a
    elif isinstance(a, Tensor):
        view = a.numpy()
    else:
        raise TypeError(f"a must be a Tensor or ndarray, not {type(a).__name__}")
    if view.shape != bt.shape:
        raise ValueError(f"a is {view.shape} but b is {bt.shape}: shapes must be equal")
    view += bt.numpy()


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    """Pre-LN: h = x + attn(ln1(x), mask); out = h + ffn(ln2(h)). x is not modified."""
    xt = as_tensor(x, "x")
    ln1, ln2 = block.ln1, block.ln2
    h = tensor_from(xt)  # a copy: the residual stream must not be x's own memory
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps), mask))
    residual_add(h, block.ffn.forward(layernorm(h, ln2.gamma, ln2.beta, ln2.eps)))
    return h.numpy()  # type: ignore[return-value]
