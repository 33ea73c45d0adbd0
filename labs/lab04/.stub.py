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
    # TODO(lab04): check the shapes, then compute scale * q @ kᵀ.
    raise NotImplementedError("lab04: implement attention_scores")


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
    # TODO(lab04): add the mask to scores, element by element, in place.
    raise NotImplementedError("lab04: implement apply_mask")


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
    # TODO(lab04): for each row: subtract the max, exponentiate, divide by the sum.
    raise NotImplementedError("lab04: implement softmax")
