"""Decoding: one codec frame back into a value (`loads`), within a `Budget`.

This is the trust boundary of the wire: a reply is written by a process the student's code
controls. The decoder accepts only the tags `grader.codec.encode` writes, only numeric
dtypes, and builds nothing but plain values, numpy arrays, Tensors, Generators and
Handles (or, in the child, the objects its `resolve_handle` and `build` give). It charges
every element, item, dict entry, string and integer to the budget as it goes, and checks
the deadline between items; anything malformed or over budget is a `CodecError`. What it
does not do: bound the frame's bytes (`grader.codec.frame` does, before parsing) or judge
the value. The idea is that of a validating parser: whitelist the shapes, count the cost.

Example:
    >>> from grader.codec import Budget, CodecError, dumps
    >>> loads(dumps({"x": [1, 2]}))
    {'x': [1, 2]}
    >>> try:
    ...     loads(dumps(list(range(10))), budget=Budget(items=5))
    ... except CodecError as e:
    ...     print(e)
    the value holds more than 5 items in all
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from framework.tensor import Tensor
from grader.codec.budget import DEFAULT_BUDGET, Budget
from grader.codec.frame import split_frame
from grader.codec.values import (
    ALLOWED_KINDS,
    MAX_DEPTH,
    CodecError,
    Handle,
    entropy,
    generator,
)

__all__ = ["loads"]

# Tags whose dict carries fields besides the tag itself (and how many).
_EXTRA = {"$tensor": 4, "$nd": 2, "$h": 3, "$new": 3}
_KEY_TYPES = (str, int, float, bool, type(None), tuple, bytes)

_Builder = Callable[[str, list[Any], dict[str, Any], dict[str, Any]], Any]


def loads(
    frame: bytes | bytearray,
    resolve_handle: Callable[[int], Any] | None = None,
    build: _Builder | None = None,
    budget: Budget = DEFAULT_BUDGET,
) -> Any:
    """Decode one frame. Without `resolve_handle`, handles decode to `Handle` objects.

    Raises:
        CodecError: for anything malformed or over `budget`, and for nothing else; errors
            from `resolve_handle` and `build` pass through unchanged.
    """
    doc, blobs = split_frame(frame, budget)
    decoder = _Decoder(blobs, resolve_handle, build, budget)
    try:
        return decoder.dec(doc)
    except (KeyError, IndexError, TypeError, ValueError, OverflowError, RecursionError) as e:
        if isinstance(e, CodecError):
            raise
        if resolve_handle is not None or build is not None:
            raise  # the child's own decode: handle/build errors carry their meaning
        raise CodecError(f"malformed value: {type(e).__name__}: {str(e)[:200]}") from None


class _Decoder:
    def __init__(
        self,
        blobs: list[memoryview],
        resolve_handle: Callable[[int], Any] | None,
        build: _Builder | None,
        budget: Budget,
    ) -> None:
        self.blobs = blobs
        self.storage: dict[int, np.ndarray] = {}
        self.tensors: list[Tensor] = []  # in the order of their first occurrence
        self.resolve_handle = resolve_handle
        self.build = build
        self.budget = budget
        self.elements = 0
        self.items = 0
        self.deadline = time.monotonic() + budget.seconds

    def spend(self, elements: int = 0, items: int = 0) -> None:
        """Charge the budget; raise CodecError when a limit is passed."""
        self.elements += elements
        self.items += items
        if self.elements > self.budget.elements:
            raise CodecError(
                f"the value holds more than {self.budget.elements} array elements in all"
            )
        if self.items > self.budget.items:
            raise CodecError(f"the value holds more than {self.budget.items} items in all")
        if items and self.items % 4096 < items and time.monotonic() > self.deadline:
            raise CodecError(f"decoding took longer than {self.budget.seconds:g} s")

    def get_blob(self, i: Any) -> memoryview:
        if not isinstance(i, int) or not 0 <= i < len(self.blobs):
            raise CodecError(f"bad blob reference {i!r}")
        return self.blobs[i]

    def dec(self, x: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise CodecError("value nested too deeply")
        if x is None or isinstance(x, bool | float):
            return x
        if isinstance(x, int):
            if x.bit_length() > self.budget.int_digits * 3.33:
                raise CodecError(f"an integer has more than {self.budget.int_digits} digits")
            return x
        if isinstance(x, str):
            return self.text(x)
        if isinstance(x, list):
            self.spend(items=len(x))
            return [self.dec(v, depth + 1) for v in x]
        if not isinstance(x, dict) or not x or len(x) > 1 + _EXTRA.get(next(iter(x)), 0):
            raise CodecError("malformed value")
        tag = next(iter(x))
        if tag == "$t":
            items = _as_list(x["$t"])
            self.spend(items=len(items))
            return tuple(self.dec(v, depth + 1) for v in items)
        if tag == "$d":
            return self._dict(_as_list(x["$d"]), depth)
        if tag == "$bytes":
            raw = self.get_blob(x["$bytes"])
            self.spend(elements=len(raw))
            return bytes(raw)
        if tag == "$rng":
            self.spend(items=1)  # charged as an item: a long list of them meets the deadline
            return generator(x["$rng"])
        if tag == "$seed":
            self.spend(items=1)
            return np.random.Generator(np.random.PCG64(entropy(x["$seed"])))  # = default_rng
        if tag == "$same":
            return self._same(x["$same"])
        if tag == "$nd":
            return self._array(x)
        if tag == "$tensor":
            return self._tensor(x)
        if tag == "$h":
            return self._handle(x)
        if tag == "$new" and self.build is not None:
            return self._build(x, depth, self.build)
        raise CodecError(f"unknown tag {str(tag)[:40]!r}")

    def text(self, x: str) -> str:
        """A string within budget; lone surrogates become visible escapes (never crash a print)."""
        if len(x) > self.budget.string:
            raise CodecError(f"a string is longer than {self.budget.string} characters")
        if x.isascii():
            return x
        try:
            x.encode("utf-8")
        except UnicodeEncodeError:
            return x.encode("utf-8", "backslashreplace").decode("utf-8")
        return x

    def _dict(self, pairs: list[Any], depth: int) -> dict[Any, Any]:
        if len(pairs) > self.budget.dict_size:
            raise CodecError(f"a dict has more than {self.budget.dict_size} entries")
        self.spend(items=len(pairs))
        out: dict[Any, Any] = {}
        for n, pair in enumerate(pairs):
            if n % 256 == 255 and time.monotonic() > self.deadline:
                raise CodecError(f"decoding took longer than {self.budget.seconds:g} s")
            if not isinstance(pair, list) or len(pair) != 2:
                raise CodecError("malformed dict entry")
            key = self.dec(pair[0], depth + 1)
            if not isinstance(key, _KEY_TYPES):
                raise CodecError(f"a dict key of type {type(key).__name__} is not allowed")
            out[key] = self.dec(pair[1], depth + 1)
        return out

    def _handle(self, x: dict[str, Any]) -> Any:
        hid = x["$h"]
        if not isinstance(hid, int) or isinstance(hid, bool):
            raise CodecError("bad handle id")
        if self.resolve_handle is not None:
            return self.resolve_handle(hid)
        name, text, gen = x.get("type", "object"), x.get("text", ""), x.get("gen", 0)
        if not isinstance(name, str) or not isinstance(text, str) or type(gen) is not int:
            raise CodecError("bad handle description")
        return Handle(hid, self.text(name[:200]), self.text(text[:500]), gen)

    def _build(self, x: dict[str, Any], depth: int, build: _Builder) -> Any:
        target = x["$new"]
        if not isinstance(target, str):
            raise CodecError("bad build target")
        args = [self.dec(a, depth + 1) for a in _as_list(x.get("args", []))]
        kwargs = self.dec(x.get("kwargs", {"$d": []}), depth + 1)
        attrs = self.dec(x.get("attrs", {"$d": []}), depth + 1)
        if not isinstance(kwargs, dict) or not isinstance(attrs, dict):
            raise CodecError("bad build arguments")
        return build(target, args, kwargs, attrs)

    def _array(self, x: dict[str, Any]) -> np.ndarray:
        try:
            dtype = np.dtype(str(x["dtype"]))
        except TypeError:
            raise CodecError("bad dtype") from None
        if dtype.kind not in ALLOWED_KINDS or dtype.hasobject:
            raise CodecError(f"dtype {dtype} is not allowed")
        shape = _shape(x.get("shape"))
        raw = self.get_blob(x["$nd"])
        n = _count(shape)
        self.spend(elements=n)
        if len(raw) != n * dtype.itemsize:
            raise CodecError("array size does not match its shape")
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()

    def _tensor(self, x: dict[str, Any]) -> Tensor:
        ref = x["$tensor"]
        shape, strides, offset = _shape(x.get("shape")), _shape(x.get("strides")), x.get("offset")
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise CodecError("bad tensor offset")
        self.spend(elements=_count(shape))
        if ref not in self.storage:
            raw = self.get_blob(ref)
            if len(raw) % 4:
                raise CodecError("tensor storage is not float32")
            self.spend(elements=len(raw) // 4)
            self.storage[ref] = np.frombuffer(raw, dtype=np.float32).copy()
        data = self.storage[ref]
        try:
            tensor = Tensor(data, shape, strides, offset)
        except (TypeError, ValueError) as e:
            raise CodecError(f"bad tensor: {e}") from None
        self.tensors.append(tensor)
        return tensor

    def _same(self, ref: Any) -> Tensor:
        """A Tensor that occurred earlier in the message; its elements count again."""
        if type(ref) is not int or not 0 <= ref < len(self.tensors):
            raise CodecError(f"bad tensor reference {str(ref)[:40]!r}")
        tensor = self.tensors[ref]
        self.spend(elements=_count(tensor.shape))
        return tensor


def _as_list(x: Any) -> list[Any]:
    if not isinstance(x, list):
        raise CodecError("malformed value")
    return x


def _shape(x: Any) -> tuple[int, ...]:
    if (
        not isinstance(x, list)
        or len(x) > MAX_DEPTH
        or not all(type(d) is int and 0 <= d < 2**40 for d in x)
    ):
        raise CodecError("bad shape")
    return tuple(x)


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
