"""Lab05 — the Transformer block: LayerNorm, residuals and the Pre-LN order, written by you.

    y   = gamma · (x - mean) / sqrt(var + eps) + beta    -> layernorm   (over the last dim)
    a  += b                                             -> residual_add (in place)
    h   = x + attn(ln1(x), mask)                        -> block_forward (Pre-LN)
    out = h + ffn(ln2(h))

The framework's `TransformerBlock` (framework/transformer.py) holds `ln1`, `attn`, `ln2`
and `ffn`, and its own `forward` already does all of this. Here you write LayerNorm and the
residual add yourself, then wire the block from its parts with them: call
`block.attn.forward` and `block.ffn.forward`, but not `block.forward`, and not the
framework's LayerNorm inside `layernorm`. Run `make test` in this folder after every
change; `TASK.md` explains each function.

Every Tensor argument may also be a numpy array: `as_tensor(x, "x")` turns either into a
Tensor, and `t.numpy()` gives a shaped view of a Tensor's memory (strides included).
"""

from __future__ import annotations

import numpy as np  # noqa: F401

from framework.tensor import Tensor, as_tensor, tensor_from  # noqa: F401
from framework.transformer import TransformerBlock


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    """LayerNorm over the last dimension: gamma · (x - mean) / sqrt(var + eps) + beta.

    mean and var are taken over the last dimension of each row; var is the population
    variance (divide by H, not H - 1). eps sits inside the square root.

    Args:
        x: a Tensor (or numpy array) of shape [..., H], any ndim >= 1.
        gamma: scale, shape [H].
        beta: shift, shape [H].
        eps: added to the variance so that a constant row does not divide by zero.

    Returns:
        A new Tensor of x's shape. x, gamma and beta are not modified.

    Raises:
        ValueError: if gamma or beta is not of shape [H] (H = x's last dimension).
    """
    # BEGIN SOLUTION: mean and population variance per row, normalise, then scale and shift.
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
    return tensor_from((v - mean) / np.sqrt(var + eps) * g.numpy() + b.numpy())
    # END SOLUTION


def residual_add(a: Tensor, b: Tensor) -> None:
    """In place: a += b, element by element (the residual connection).

    Args:
        a: a Tensor or numpy array, modified in place.
        b: same shape as a; not modified.

    Returns:
        None — the result is a itself.

    Raises:
        ValueError: if the shapes are not exactly equal (no broadcasting); a is then
            left as it was.
    """
    # BEGIN SOLUTION: check the shapes, then add b into a's own memory.
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
    # END SOLUTION


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    """One Pre-LN Transformer block.

        h   = x + block.attn.forward(layernorm(x, ln1), mask)
        out = h + block.ffn.forward(layernorm(h, ln2))

    ln1 and ln2 are `block.ln1` and `block.ln2` (each has gamma, beta and eps).

    Args:
        block: the framework's TransformerBlock; its weights are not modified.
        x: input rows, shape [S, H].
        mask: additive [S, S] mask (0 keeps, -1e9 blocks), or None for no mask.

    Returns:
        A new Tensor [S, H]. x is not modified.
    """
    # BEGIN SOLUTION: LN1 -> attention -> residual, then LN2 -> FFN -> residual.
    xt = as_tensor(x, "x")
    ln1, ln2 = block.ln1, block.ln2
    h = tensor_from(xt)  # a copy: the residual stream must not be x's own memory
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps), mask))
    residual_add(h, block.ffn.forward(layernorm(h, ln2.gamma, ln2.beta, ln2.eps)))
    return h
    # END SOLUTION
