"""Handout example: lab01's hints in TASK.md, followed word for word."""

from __future__ import annotations

import numpy as np

from framework.tensor import Tensor, as_tensor, tensor_from


def _position(t: Tensor, index: tuple[int, ...]) -> int:
    if len(index) != t.ndim:
        raise IndexError(f"index {index} has {len(index)} entries for shape {t.shape}")
    for d in range(t.ndim):
        if not 0 <= index[d] < t.shape[d]:
            raise IndexError(f"index[{d}] = {index[d]} is outside [0, {t.shape[d]}) for shape {t.shape}")
    pos = t.offset
    for d in range(t.ndim):
        pos += index[d] * t.strides[d]
    return pos


def tensor_get(t: Tensor, index: tuple[int, ...]) -> float:
    t = as_tensor(t, "t")
    return float(t.data[_position(t, index)])


def tensor_set(t: Tensor, index: tuple[int, ...], value: float) -> None:
    t = as_tensor(t, "t")
    t.data[_position(t, index)] = value


def softmax_stable(x: Tensor) -> Tensor:
    xt = as_tensor(x, "x")
    if xt.ndim != 1 or xt.size == 0:
        raise ValueError(f"x must be 1-D and not empty, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max())
    return tensor_from(e / e.sum())
