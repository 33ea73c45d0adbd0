"""Matrix products, softmax, activations and reductions on `Tensor`s.

Every function accepts a `Tensor` or a numpy array (converted with `as_tensor`) and returns
a new `Tensor`; the only in-place function says so in its name (`softmax_inplace`). Shapes
are checked up front and a mismatch raises `ValueError` naming both shapes.

Not here: broadcasting tricks, autograd, or anything the labs ask a student to write
(those live in `labs/labNN/student.py`, with references in `solutions/`).

Example:
    >>> softmax(tensor_from([[0.0, 0.0], [1e4, 0.0]])).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework.tensor import Tensor, as_tensor, tensor_from

__all__ = [
    "gelu",
    "matmul",
    "matmul_transposed_b",
    "softmax",
    "softmax_inplace",
    "tensor_argmax",
    "tensor_max",
    "tensor_mean",
    "tensor_sum",
    "tensor_var",
]

_GELU_C = 0.7978845608028654  # sqrt(2 / pi)


def _two_d(x: Tensor, name: str) -> None:
    if x.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {x.shape}")


def matmul(a: Any, b: Any) -> Tensor:
    """[M, K] @ [K, N] -> [M, N].

    Raises:
        ValueError: if either input is not 2-D or the inner dimensions differ.
    """
    ta, tb = as_tensor(a, "a"), as_tensor(b, "b")
    _two_d(ta, "a")
    _two_d(tb, "b")
    if ta.shape[1] != tb.shape[0]:
        raise ValueError(f"matmul: a is {ta.shape}, b is {tb.shape}; expected a[1] == b[0]")
    return tensor_from(ta.numpy() @ tb.numpy())  # (M, N)


def matmul_transposed_b(a: Any, b: Any) -> Tensor:
    """[M, K] @ [N, K]^T -> [M, N] (rows of `b` are the columns of the product).

    Raises:
        ValueError: if either input is not 2-D or the last dimensions differ.
    """
    ta, tb = as_tensor(a, "a"), as_tensor(b, "b")
    _two_d(ta, "a")
    _two_d(tb, "b")
    if ta.shape[1] != tb.shape[1]:
        raise ValueError(
            f"matmul_transposed_b: a is {ta.shape}, b is {tb.shape}; expected a[1] == b[1]"
        )
    return tensor_from(ta.numpy() @ tb.numpy().T)  # (M, N)


def _softmax_np(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=-1, keepdims=True)  # max subtraction: exp never overflows
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)  # type: ignore[no-any-return]


def softmax(x: Any) -> Tensor:
    """Softmax over the last dimension, numerically stable, any ndim >= 1.

    A row whose entries are all equal (for example all -1e9 after masking) becomes uniform.

    Raises:
        ValueError: for a 0-D tensor or an empty last dimension.
    """
    t = as_tensor(x, "x")
    if t.ndim == 0 or t.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {t.shape}")
    return tensor_from(_softmax_np(t.numpy().astype(np.float32)))


def softmax_inplace(t: Tensor) -> None:
    """In place: replace every row (last dimension) of `t` by its softmax."""
    if not isinstance(t, Tensor):
        raise TypeError(f"softmax_inplace needs a Tensor, not {type(t).__name__}")
    if t.ndim == 0 or t.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {t.shape}")
    view = t.numpy()
    view[...] = _softmax_np(view)


def gelu(x: Any) -> Tensor:
    """GELU, tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
    v = as_tensor(x, "x").numpy()
    return tensor_from(0.5 * v * (1.0 + np.tanh(_GELU_C * (v + 0.044715 * v**3))))


def tensor_sum(x: Any) -> float:
    """Sum of all elements (accumulated in float64)."""
    return float(as_tensor(x, "x").numpy().sum(dtype=np.float64))


def tensor_mean(x: Any) -> float:
    """Mean of all elements (accumulated in float64)."""
    return float(as_tensor(x, "x").numpy().mean(dtype=np.float64))


def tensor_var(x: Any) -> float:
    """Population variance (divide by N) of all elements."""
    return float(as_tensor(x, "x").numpy().var(dtype=np.float64))


def tensor_max(x: Any) -> float:
    """Largest element.

    Raises:
        ValueError: for an empty tensor.
    """
    t = as_tensor(x, "x")
    if t.size == 0:
        raise ValueError("tensor_max of an empty tensor")
    return float(t.numpy().max())


def tensor_argmax(x: Any) -> int:
    """Flat index (row-major) of the first maximum.

    Raises:
        ValueError: for an empty tensor.
    """
    t = as_tensor(x, "x")
    if t.size == 0:
        raise ValueError("tensor_argmax of an empty tensor")
    return int(np.argmax(t.numpy()))
