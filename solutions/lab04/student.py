"""Lab04 — self-attention: the three core steps, written by you.

    scores = scale · Q @ Kᵀ      -> attention_scores
    scores = scores + mask       -> apply_mask      (in place)
    attn   = softmax(scores)     -> softmax         (over the last dimension)

The framework's `MultiHeadAttention.forward` already chains these for every head; here you
write each step yourself, so that none of it is a black box. Run `make test` in this
folder after every change; `TASK.md` explains each function.

Every argument may be a Tensor or a numpy array: `as_tensor(x, "x")` turns either into a
Tensor, and `t.numpy()` gives a shaped view of a Tensor's memory. You may use numpy and the
`framework` helpers `tensor_zeros`, `tensor_from` and `as_tensor`, but not
`framework.softmax` or `framework.matmul_transposed_b`: the point is to write them.
"""

from __future__ import annotations

# BEGIN SOLUTION
import numpy as np

# END SOLUTION
from framework import Tensor, as_tensor, tensor_from, tensor_zeros  # noqa: F401


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores: out[i][j] = scale · Σ_d q[i][d] · k[j][d].

    Args:
        q: queries, shape [S, hd] (a Tensor or numpy array).
        k: keys, shape [T, hd]. T may differ from S.
        scale: usually 1/√hd.

    Returns:
        A new Tensor of shape [S, T]. `q` and `k` are not modified.

    Raises:
        ValueError: if q or k is not 2-D, or their last dimensions (hd) differ.
    """
    # BEGIN SOLUTION: check the shapes, then compute scale * q @ kᵀ.
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    return tensor_from(np.float32(scale) * (qt.numpy() @ kt.numpy().T))  # (S, T)
    # END SOLUTION


def apply_mask(scores: Tensor, mask: Tensor) -> None:
    """In place: scores[i][j] += mask[i][j]  (0 keeps a position, -1e9 blocks it).

    Args:
        scores: a Tensor or numpy array, modified in place.
        mask: same shape as `scores`; not modified.

    Returns:
        None — the result is `scores` itself.

    Raises:
        ValueError: if the shapes are not exactly equal.
    """
    # BEGIN SOLUTION: add the mask to scores, element by element, in place.
    mt = as_tensor(mask, "mask")
    if isinstance(scores, np.ndarray):
        view = scores
    elif isinstance(scores, Tensor):
        view = scores.numpy()
    else:
        raise TypeError(f"scores must be a Tensor or ndarray, not {type(scores).__name__}")
    if view.shape != mt.shape:
        raise ValueError(f"scores is {view.shape} but mask is {mt.shape}")
    view += mt.numpy()
    # END SOLUTION


def softmax(x: Tensor) -> Tensor:
    """Softmax over the last dimension, for any ndim >= 1.

    out[..., j] = exp(x[..., j] - m) / Σ_k exp(x[..., k] - m), with m the row's maximum.
    Subtracting m changes nothing mathematically but keeps exp from overflowing, so logits
    of ±1e4 stay finite; a row that is entirely -1e9 becomes uniform, never NaN.

    Args:
        x: a Tensor of any shape with a non-empty last dimension.

    Returns:
        A new Tensor of the same shape whose rows sum to 1. `x` is not modified.
    """
    # BEGIN SOLUTION: for each row: subtract the max, exponentiate, divide by the sum.
    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max(axis=-1, keepdims=True))  # max subtraction: no overflow
    return tensor_from(e / e.sum(axis=-1, keepdims=True))
    # END SOLUTION
