"""Handout example: the lab07 solution, returning numpy arrays where it returned Tensors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from framework import Tensor, as_tensor


def _logits_and_targets(logits: Tensor, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """logits as a float64 [S, V] array and targets as an int array, both checked."""
    z = as_tensor(logits, "logits").numpy().astype(np.float64)
    if z.ndim != 2 or z.shape[1] == 0:
        raise ValueError(f"logits must have shape [S, V] with V >= 1, got {z.shape}")
    y = np.asarray(targets)
    if y.ndim != 1 or (y.size and (y.dtype == bool or not np.issubdtype(y.dtype, np.integer))):
        raise TypeError(f"targets must be a sequence of ints, got {y.dtype} of shape {y.shape}")
    if y.shape[0] != z.shape[0]:
        raise ValueError(f"targets has {y.shape[0]} entries, logits has {z.shape[0]} rows")
    if y.size and (y.min() < 0 or y.max() >= z.shape[1]):
        raise ValueError(f"targets must be in [0, {z.shape[1]}), got {y.tolist()}")
    return z, y.astype(np.int64)


def cross_entropy_loss(logits: Tensor, targets: Sequence[int]) -> float:
    """Mean over positions of logsumexp(z_s) - z_s[target_s], with the max subtracted."""
    z, y = _logits_and_targets(logits, targets)
    m = z.max(axis=1, keepdims=True)  # (S, 1)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))  # (S,)
    return float((lse - z[np.arange(len(y)), y]).mean())


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> np.ndarray:
    """(softmax(logits) - one_hot(targets)) / S, shape [S, V]."""
    z, y = _logits_and_targets(logits, targets)
    e = np.exp(z - z.max(axis=1, keepdims=True))  # (S, V)
    grad = e / e.sum(axis=1, keepdims=True)
    grad[np.arange(len(y)), y] -= 1.0
    return grad / len(y)


def _writable(x: Tensor | np.ndarray, name: str) -> np.ndarray:
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"{name} must be a Tensor or numpy array, not {type(x).__name__}")


def adam_step(
    param: Tensor,
    grad: Tensor,
    m: Tensor,
    v: Tensor,
    t: int,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 0.0,
) -> None:
    """One AdamW step in place, torch.optim.AdamW's order: decay, moments, update."""
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy()
    for name, arr in (("grad", g), ("m", mm), ("v", vv)):
        if arr.shape != p.shape:
            raise ValueError(f"{name} has shape {arr.shape}, param has {p.shape}")
    if isinstance(t, bool) or not isinstance(t, int | np.integer) or t < 1:
        raise ValueError(f"t is the step number and must be an int >= 1, got {t!r}")
    p -= lr * weight_decay * p  # decoupled decay, on the value before the update
    mm[...] = beta1 * mm + (1 - beta1) * g
    vv[...] = beta2 * vv + (1 - beta2) * g * g
    m_hat = mm / (1 - beta1**t)
    v_hat = vv / (1 - beta2**t)
    p -= lr * m_hat / (np.sqrt(v_hat) + eps)
