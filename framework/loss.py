"""Cross-entropy loss of next-token logits, and its gradient with respect to the logits.

For logits z of shape [..., V] and integer targets y of shape [...], over N positions::

    loss = (1/N) Σ_n  ( logsumexp(z_n) - z_n[y_n] )
    dloss/dz_n = ( softmax(z_n) - one_hot(y_n) ) / N

logsumexp subtracts each row's maximum first, so logits of ±1e4 give a finite loss (the
naive log(Σ exp z) overflows to inf, then NaN). The gradient is divided by N because the
loss is a mean: a batch twice as long must not take a step twice as big (the C course's
training loop sums its per-sample gradients instead).

`cross_entropy_loss` and `softmax_ce_grad` are lab07's two functions, here as the
framework's reference; `cross_entropy_with_grad` computes both in one pass for the
training loop. Deliberately not here: label smoothing, ignore indices, class weights.

Example:
    >>> z = tensor_from([[0.0, 0.0], [10.0, 0.0]])
    >>> round(cross_entropy_loss(z, [0, 0]), 6)  # (ln 2 + ln(1 + e^-10)) / 2
    0.346596
    >>> softmax_ce_grad(z, [0, 0]).numpy()[0].tolist()
    [-0.25, 0.25]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.tensor import Tensor, as_tensor, tensor_from

__all__ = ["cross_entropy_loss", "cross_entropy_with_grad", "softmax_ce_grad"]


def _checked(logits: Any, targets: Any) -> tuple[np.ndarray, NDArray[np.int64]]:
    """Logits as a float array [..., V] and targets as int64 [...], validated."""
    z = logits.numpy() if isinstance(logits, Tensor) else as_tensor(logits, "logits").numpy()
    if z.ndim < 2 or z.shape[-1] == 0:
        raise ValueError(f"logits must have shape [..., V] with V >= 1, got {z.shape}")
    y = np.asarray(targets)
    if y.dtype == bool or not (np.issubdtype(y.dtype, np.integer) or y.size == 0):
        raise TypeError(f"targets must be integers, got dtype {y.dtype}")
    y = y.astype(np.int64)
    if y.shape != z.shape[:-1]:
        raise ValueError(
            f"targets must have shape {z.shape[:-1]} (one per row of logits {z.shape}), "
            f"got {y.shape}"
        )
    bad = (y < 0) | (y >= z.shape[-1])
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"targets must be in [0, {z.shape[-1]}), got {int(y[first])} at index {first}"
        )
    return z, y


def _logsumexp(z: np.ndarray) -> np.ndarray:
    m = z.max(axis=-1, keepdims=True)  # (..., 1)
    out: np.ndarray = (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))[..., 0]  # (...)
    return out


def cross_entropy_loss(logits: Any, targets: Sequence[int] | np.ndarray) -> float:
    """Mean cross-entropy of `logits` [..., V] against integer `targets` [...].

    Args:
        logits: a Tensor or array of shape [S, V] (or [B, T, V]).
        targets: one int in [0, V) per row of logits.

    Returns:
        The mean over all positions, as a Python float (computed in float64).

    Raises:
        ValueError: if the shapes disagree or a target is outside [0, V).
        TypeError: if targets are not integers.

    Example:
        >>> round(cross_entropy_loss(np.zeros((4, 10), np.float32), [3, 7, 1, 5]), 6)
        2.302585
    """
    z, y = _checked(logits, targets)
    z64 = z.astype(np.float64)
    picked = np.take_along_axis(z64, y[..., None], axis=-1)[..., 0]  # (...)
    return float((_logsumexp(z64) - picked).mean())


def softmax_ce_grad(logits: Any, targets: Sequence[int] | np.ndarray) -> Tensor:
    """Gradient of `cross_entropy_loss` with respect to the logits: (softmax - one_hot) / N.

    Args:
        logits: a Tensor or array of shape [..., V].
        targets: one int in [0, V) per row.

    Returns:
        A new Tensor with the shape of `logits`; each row sums to 0.

    Raises:
        ValueError, TypeError: as `cross_entropy_loss`.
    """
    z, y = _checked(logits, targets)
    _, grad = _loss_and_grad(z, y)
    return tensor_from(grad)


def cross_entropy_with_grad(
    logits: np.ndarray, targets: np.ndarray
) -> tuple[float, NDArray[np.float32]]:
    """Loss and gradient in one pass: the training loop's version.

    Args:
        logits: float array [B, T, V] (as `GPTModel.forward_batch` returns it).
        targets: int array [B, T].

    Returns:
        (mean loss, float32 gradient of the same shape as `logits`).

    Raises:
        ValueError, TypeError: as `cross_entropy_loss`.
    """
    z, y = _checked(logits, targets)
    return _loss_and_grad(z, y)


def _loss_and_grad(z: np.ndarray, y: NDArray[np.int64]) -> tuple[float, NDArray[np.float32]]:
    z32 = z.astype(np.float32, copy=False)
    m = z32.max(axis=-1, keepdims=True)  # (..., 1)
    e = np.exp(z32 - m)  # (..., V) every exponent <= 0: no overflow
    total = e.sum(axis=-1, keepdims=True, dtype=np.float64)  # (..., 1)
    picked = np.take_along_axis(z32, y[..., None], axis=-1)  # (..., 1)
    loss = float((m + np.log(total) - picked).mean())
    n = max(y.size, 1)
    grad = e * (1.0 / (total * n)).astype(np.float32)  # (..., V) softmax / N
    rows = grad.reshape(-1, z.shape[-1])  # (N, V) view; each row is hit once
    rows[np.arange(y.size), y.reshape(-1)] -= np.float32(1.0 / n)
    return loss, grad
