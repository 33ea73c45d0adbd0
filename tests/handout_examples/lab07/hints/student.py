"""Handout example: lab07's hints in TASK.md, followed word for word."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def _check(logits: Tensor, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    z = as_tensor(logits, "logits").numpy().astype(np.float64)
    if z.ndim != 2:
        raise ValueError(f"logits must be [S, V], got {z.shape}")
    y = np.asarray(targets)
    if len(y) != z.shape[0]:
        raise ValueError(f"len(targets) = {len(y)}, S = {z.shape[0]}")
    if (y < 0).any() or (y >= z.shape[1]).any():
        raise ValueError(f"targets must be in [0, {z.shape[1]}), got {y.tolist()}")
    return z, y


def cross_entropy_loss(logits: Tensor, targets: Sequence[int]) -> float:
    z, y = _check(logits, targets)
    m = z.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
    return float((lse - z[np.arange(len(y)), y]).mean())


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> Tensor:
    z, y = _check(logits, targets)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    p[np.arange(len(y)), y] -= 1
    return tensor_from(p / len(y))


def _writable(x: Tensor | np.ndarray) -> np.ndarray:
    return x.numpy() if isinstance(x, Tensor) else x


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
    p, m_arr, v_arr = _writable(param), _writable(m), _writable(v)
    g = as_tensor(grad, "grad").numpy()
    if g.shape != p.shape or m_arr.shape != p.shape or v_arr.shape != p.shape:
        raise ValueError(f"shapes differ: param {p.shape}, grad {g.shape}, m {m_arr.shape}")
    if t < 1:
        raise ValueError(f"t starts at 1, got {t}")
    p -= lr * weight_decay * p
    m_arr *= beta1
    m_arr += (1 - beta1) * g
    v_arr *= beta2
    v_arr += (1 - beta2) * g * g
    m_hat = m_arr / (1 - beta1**t)
    v_hat = v_arr / (1 - beta2**t)
    p -= lr * m_hat / (np.sqrt(v_hat) + eps)
