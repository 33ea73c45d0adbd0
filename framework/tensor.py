"""The course's Tensor: float32 values in flat storage, addressed through strides.

A `Tensor` is a thin, explicit wrapper over a 1-D float32 numpy array (`data`) plus the
numbers that say how an N-D index maps into it: `shape`, `strides` (counted in elements,
not bytes) and `offset`. Element `idx` lives at::

    data[offset + sum(idx[i] * strides[i] for i in range(ndim))]

New tensors are C-contiguous (row-major: the last stride is 1). `transpose()`, `.T` and
`permute()` return *views*: new Tensor objects over the same `data` with other strides, so
writing through one is seen by the other. That is what lab01 is about, and why an offset
computed from the shape alone is wrong for a view.

What this module deliberately does not do: no operator overloading, no broadcasting rules
of its own, no autograd. Maths lives in `framework.math_ops`; `numpy()` gives a zero-copy
shaped view whenever numpy is the right tool.

Example:
    >>> t = tensor_from([[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]])
    >>> t.shape, t.strides
    ((2, 3), (3, 1))
    >>> t.T.shape, t.T.strides
    ((3, 2), (1, 3))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Tensor",
    "as_tensor",
    "tensor_create",
    "tensor_fill_data",
    "tensor_from",
    "tensor_full",
    "tensor_ones",
    "tensor_randn",
    "tensor_zeros",
]

Shape = tuple[int, ...]


def _check_shape(shape: Iterable[int], name: str = "shape") -> Shape:
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"{name} must be a tuple of ints, not {type(shape).__name__}") from None
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int | np.integer):
            raise TypeError(f"{name} must contain ints, got {d!r} in {dims}")
        if d < 0:
            raise ValueError(f"{name} must not contain negative dimensions, got {dims}")
    return tuple(int(d) for d in dims)


def _dims(args: tuple[int | Sequence[int], ...]) -> tuple[int, ...]:
    """(2, 0, 1) from either f(2, 0, 1) or f((2, 0, 1))."""
    if len(args) == 1 and not isinstance(args[0], int | np.integer):
        return tuple(int(a) for a in args[0])
    return tuple(int(a) for a in args)  # type: ignore[arg-type]


def _contiguous_strides(shape: Shape) -> Shape:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    return tuple(strides)


class Tensor:
    """A float32 N-D array stored flat, with explicit strides.

    Attributes:
        data: the flat float32 storage (1-D numpy array, writable, possibly shared).
        shape: size of each dimension.
        strides: elements to skip per step along each dimension.
        offset: index in `data` of element (0, 0, ...).

    Example:
        >>> t = tensor_zeros((2, 3))
        >>> t.numpy()[1, 2] = 5.0
        >>> float(t.data[1 * 3 + 2])
        5.0
    """

    __slots__ = ("data", "offset", "shape", "strides")

    data: NDArray[np.float32]
    shape: Shape
    strides: Shape
    offset: int

    def __init__(
        self,
        data: NDArray[np.float32],
        shape: Sequence[int],
        strides: Sequence[int] | None = None,
        offset: int = 0,
    ) -> None:
        if not isinstance(data, np.ndarray) or data.ndim != 1 or data.dtype != np.float32:
            raise TypeError("data must be a 1-D float32 numpy array (use tensor_from to convert)")
        shp = _check_shape(shape)
        st = _contiguous_strides(shp) if strides is None else _check_shape(strides, "strides")
        if len(st) != len(shp):
            raise ValueError(f"strides {st} must have one entry per dimension of shape {shp}")
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        size = 1
        for d in shp:
            size *= d
        if size:
            last = offset + sum((d - 1) * s for d, s in zip(shp, st, strict=True))
            if last >= data.size:
                raise ValueError(
                    f"shape {shp} with strides {st} and offset {offset} reaches index {last}, "
                    f"but data has only {data.size} elements"
                )
        self.data = data
        self.shape = shp
        self.strides = st
        self.offset = int(offset)

    # -- size -------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements (product of the shape)."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    def is_contiguous(self) -> bool:
        """True when the strides are the row-major strides of the shape."""
        return self.strides == _contiguous_strides(self.shape)

    # -- views ------------------------------------------------------------------------
    def numpy(self) -> NDArray[np.float32]:
        """A writable numpy view of the same memory, with this tensor's shape and strides."""
        if self.is_contiguous():  # a slice, reshaped: 5x faster than as_strided
            return self.data[self.offset : self.offset + self.size].reshape(self.shape)
        item = self.data.itemsize
        base = self.data[self.offset :]
        return np.lib.stride_tricks.as_strided(
            base, shape=self.shape, strides=tuple(s * item for s in self.strides), writeable=True
        )

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        arr = self.numpy()
        if copy:
            arr = arr.copy()
        return arr if dtype is None else arr.astype(dtype)

    def permute(self, *axes: int | Sequence[int]) -> Tensor:
        """A view with the dimensions reordered; `permute(1, 0)` is the 2-D transpose.

        Raises:
            ValueError: if `axes` is not a permutation of `range(ndim)`.
        """
        order = _dims(axes)
        if sorted(order) != list(range(self.ndim)):
            raise ValueError(f"axes must be a permutation of 0..{self.ndim - 1}, got {order}")
        return Tensor(
            self.data,
            tuple(self.shape[a] for a in order),
            tuple(self.strides[a] for a in order),
            self.offset,
        )

    def transpose(self) -> Tensor:
        """The 2-D transpose as a view sharing `data` (no copy).

        Raises:
            ValueError: if the tensor is not 2-D (use `permute` for other ranks).
        """
        if self.ndim != 2:
            raise ValueError(f"transpose() needs a 2-D tensor, got shape {self.shape}")
        return self.permute(1, 0)

    @property
    def T(self) -> Tensor:
        """Same as `transpose()`."""
        return self.transpose()

    def contiguous(self) -> Tensor:
        """A C-contiguous copy (or self if it already is contiguous with offset 0)."""
        if self.is_contiguous() and self.offset == 0 and self.data.size == self.size:
            return self
        return tensor_from(self.numpy())

    def copy(self) -> Tensor:
        """A deep, C-contiguous copy."""
        return tensor_from(self.numpy().copy())

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """A contiguous tensor with a new shape and the same elements in row-major order."""
        new = _check_shape(_dims(shape))
        n = 1
        for d in new:
            n *= d
        if n != self.size:
            raise ValueError(f"cannot reshape {self.shape} ({self.size} elements) into {new}")
        src = self.contiguous()
        return Tensor(src.data, new, None, src.offset)

    def tolist(self) -> Any:
        """Nested Python lists of floats."""
        return self.numpy().tolist()

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), precision=4, suppress_small=True, threshold=20)
        return f"Tensor(shape={self.shape}, strides={self.strides}, offset={self.offset},\n{body})"


# -- creation ---------------------------------------------------------------------------
def tensor_zeros(shape: Iterable[int]) -> Tensor:
    """A new contiguous tensor of zeros."""
    shp = _check_shape(shape)
    return Tensor(np.zeros(max(int(np.prod(shp)), 0), dtype=np.float32), shp)


def tensor_create(shape: Iterable[int]) -> Tensor:
    """A new contiguous tensor (zero-filled: unlike C, Python never hands out garbage)."""
    return tensor_zeros(shape)


def tensor_ones(shape: Iterable[int]) -> Tensor:
    """A new contiguous tensor of ones."""
    return tensor_full(shape, 1.0)


def tensor_full(shape: Iterable[int], value: float) -> Tensor:
    """A new contiguous tensor with every element equal to `value`."""
    t = tensor_zeros(shape)
    t.data[:] = value
    return t


def tensor_from(values: ArrayLike) -> Tensor:
    """A new contiguous float32 tensor holding a copy of `values` (array, list, Tensor)."""
    if isinstance(values, Tensor):
        values = values.numpy()
    arr = np.array(values, dtype=np.float32, copy=True, order="C")
    return Tensor(arr.reshape(-1), arr.shape)


def tensor_fill_data(t: Tensor, values: ArrayLike) -> None:
    """Copy `values` into `t` in place, in row-major order of `t`'s shape.

    Raises:
        ValueError: if `values` does not hold exactly `t.size` numbers.
    """
    arr = np.asarray(values, dtype=np.float32).reshape(-1)
    if arr.size != t.size:
        raise ValueError(f"values has {arr.size} numbers, tensor of shape {t.shape} needs {t.size}")
    t.numpy()[...] = arr.reshape(t.shape)


def tensor_randn(
    shape: Iterable[int], rng: np.random.Generator, mean: float = 0.0, std: float = 1.0
) -> Tensor:
    """A new tensor of normal samples drawn from `rng` (always pass a seeded Generator)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, not {type(rng).__name__}")
    shp = _check_shape(shape)
    return tensor_from(rng.normal(mean, std, size=shp))


def as_tensor(x: Any, name: str = "x") -> Tensor:
    """Accept a Tensor, numpy array or nested list; return a Tensor (no copy for a Tensor).

    Raises:
        TypeError: if `x` is not numeric array-like; the message names the argument.
    """
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray | list | tuple) or np.isscalar(x):
        try:
            arr = np.asarray(x)
            if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
                raise TypeError
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must be a Tensor or a numeric array, got {type(x).__name__}"
            ) from None
        if arr.dtype == np.float32 and arr.flags.c_contiguous:
            return Tensor(arr.reshape(-1), arr.shape)
        return tensor_from(arr)
    raise TypeError(f"{name} must be a Tensor or a numpy array, not {type(x).__name__}")
