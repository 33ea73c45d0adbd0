"""The wire format between the grader and a sandbox child: plain data only, never pickle.

A message is a JSON document plus binary blobs for array storage. What can cross:
None, bool, int, float (NaN and ±inf included), str, bytes, list, tuple, dict, numeric
numpy arrays and scalars, `framework.Tensor` (its whole storage, shape, strides and offset,
so a transposed view arrives as a view), and `Handle` (a reference to an object that stays
in the child). Anything else is turned into a handle by the child's encoder (see
`encode(..., make_handle=...)`).

The decoder is the trust boundary: it accepts only the tags below, only numeric dtypes,
bounded sizes, and builds nothing but plain values, numpy arrays, Tensors and Handles.

Frame layout: u32 json length, json bytes, u32 blob count, then per blob u64 length + bytes.

Example:
    >>> frame = dumps({"a": (1, 2.5)})
    >>> loads(frame)
    {'a': (1, 2.5)}
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from framework.tensor import Tensor

__all__ = ["MAX_FRAME", "Build", "CodecError", "Handle", "dumps", "loads"]

MAX_FRAME = 512 * 1024 * 1024
_ALLOWED_KINDS = frozenset("biuf")  # bool, signed, unsigned, float
_MAX_DEPTH = 64


class CodecError(ValueError):
    """A message that is not valid plain data (malformed, too large or of a forbidden type)."""


@dataclass(frozen=True)
class Handle:
    """An object that lives in the sandbox child; `type_name` and `text` describe it."""

    id: int
    type_name: str
    text: str = ""

    def __repr__(self) -> str:
        return f"<{self.type_name} object in the sandbox>"


@dataclass(frozen=True)
class Build:
    """Ask the child to construct `framework` object `target` (``"module:Name"``).

    Only the grader sends it; the child refuses targets outside the `framework` package.
    `attrs` are set on the new object after construction.
    """

    target: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] | None = None
    attrs: dict[str, Any] | None = None


def _exact_scalar(x: Any) -> Any:
    """The true builtin value of x, bypassing any overridden dunder of a subclass."""
    if isinstance(x, bool):
        return bool(int.__index__(x))
    if isinstance(x, int):
        return int.__index__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    return x


class _Encoder:
    def __init__(self, make_handle: Callable[[Any], Handle] | None) -> None:
        self.blobs: list[bytes] = []
        self.storage_ids: dict[int, int] = {}
        self.make_handle = make_handle

    def blob(self, arr: np.ndarray) -> int:
        self.blobs.append(np.ascontiguousarray(arr).tobytes())
        return len(self.blobs) - 1

    def enc(self, x: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise CodecError("value nested too deeply")
        if x is None or isinstance(x, bool | int | float | str):
            return _exact_scalar(x)
        if isinstance(x, np.generic) and x.dtype.kind in _ALLOWED_KINDS:
            return x.item()
        if isinstance(x, bytes | bytearray):
            return {"$bytes": self.blob(np.frombuffer(bytes(x), dtype=np.uint8))}
        if isinstance(x, Tensor):
            data = np.ndarray.view(x.data, np.ndarray)
            key = id(x.data)
            if key not in self.storage_ids:
                self.storage_ids[key] = self.blob(data)
            return {
                "$tensor": self.storage_ids[key],
                "n": int(data.size),
                "shape": list(x.shape),
                "strides": list(x.strides),
                "offset": x.offset,
            }
        if isinstance(x, np.ndarray) and x.dtype.kind in _ALLOWED_KINDS:
            arr = np.ndarray.view(x, np.ndarray)
            return {"$nd": self.blob(arr), "dtype": arr.dtype.str, "shape": list(arr.shape)}
        if isinstance(x, Handle):
            return {"$h": x.id, "type": x.type_name, "text": x.text}
        if isinstance(x, Build):
            return {
                "$new": x.target,
                "args": [self.enc(a, depth + 1) for a in x.args],
                "kwargs": self.enc(dict(x.kwargs or {}), depth + 1),
                "attrs": self.enc(dict(x.attrs or {}), depth + 1),
            }
        if type(x) in (list, tuple) or (self.make_handle is None and isinstance(x, list | tuple)):
            items = [self.enc(v, depth + 1) for v in x]
            return items if isinstance(x, list) else {"$t": items}
        if type(x) is dict:
            return {"$d": [[self.enc(k, depth + 1), self.enc(v, depth + 1)] for k, v in x.items()]}
        if self.make_handle is not None:
            h = self.make_handle(x)
            return {"$h": h.id, "type": h.type_name, "text": h.text}
        raise CodecError(f"cannot send a {type(x).__name__} value")


def dumps(value: Any, make_handle: Callable[[Any], Handle] | None = None) -> bytes:
    """Encode `value` into one frame; unsendable objects become handles via `make_handle`."""
    enc = _Encoder(make_handle)
    doc = json.dumps(enc.enc(value), allow_nan=True, separators=(",", ":")).encode()
    parts = [struct.pack("<I", len(doc)), doc, struct.pack("<I", len(enc.blobs))]
    for b in enc.blobs:
        parts.append(struct.pack("<Q", len(b)))
        parts.append(b)
    return b"".join(parts)


class _Decoder:
    def __init__(
        self,
        blobs: list[bytes],
        resolve_handle: Callable[[int], Any] | None,
        build: Callable[[str, list[Any], dict[str, Any], dict[str, Any]], Any] | None,
    ) -> None:
        self.blobs = blobs
        self.storage: dict[int, np.ndarray] = {}
        self.resolve_handle = resolve_handle
        self.build = build

    def get_blob(self, i: Any) -> bytes:
        if not isinstance(i, int) or not 0 <= i < len(self.blobs):
            raise CodecError(f"bad blob reference {i!r}")
        return self.blobs[i]

    def dec(self, x: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise CodecError("value nested too deeply")
        if x is None or isinstance(x, bool | int | float | str):
            return x
        if isinstance(x, list):
            return [self.dec(v, depth + 1) for v in x]
        if not isinstance(x, dict) or len(x) == 0:
            raise CodecError("malformed value")
        tag = next(iter(x))
        if tag == "$t":
            return tuple(self.dec(v, depth + 1) for v in _as_list(x["$t"]))
        if tag == "$d":
            out: dict[Any, Any] = {}
            for pair in _as_list(x["$d"]):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise CodecError("malformed dict entry")
                key = self.dec(pair[0], depth + 1)
                try:
                    out[key] = self.dec(pair[1], depth + 1)
                except TypeError:
                    raise CodecError("unhashable dict key") from None
            return out
        if tag == "$bytes":
            return bytes(self.get_blob(x["$bytes"]))
        if tag == "$nd":
            return self._array(x)
        if tag == "$tensor":
            return self._tensor(x)
        if tag == "$h":
            hid = x["$h"]
            if not isinstance(hid, int):
                raise CodecError("bad handle id")
            if self.resolve_handle is not None:
                return self.resolve_handle(hid)
            return Handle(hid, str(x.get("type", "object"))[:200], str(x.get("text", ""))[:500])
        if tag == "$new" and self.build is not None:
            target = x["$new"]
            if not isinstance(target, str):
                raise CodecError("bad build target")
            args = [self.dec(a, depth + 1) for a in _as_list(x.get("args", []))]
            kwargs = self.dec(x.get("kwargs", {"$d": []}), depth + 1)
            attrs = self.dec(x.get("attrs", {"$d": []}), depth + 1)
            return self.build(target, args, kwargs, attrs)
        raise CodecError(f"unknown tag {str(tag)[:40]!r}")

    def _array(self, x: dict[str, Any]) -> np.ndarray:
        try:
            dtype = np.dtype(str(x["dtype"]))
        except TypeError:
            raise CodecError("bad dtype") from None
        if dtype.kind not in _ALLOWED_KINDS or dtype.hasobject:
            raise CodecError(f"dtype {dtype} is not allowed")
        shape = _shape(x.get("shape"))
        raw = self.get_blob(x["$nd"])
        n = int(np.prod(shape)) if shape else 1
        if len(raw) != n * dtype.itemsize:
            raise CodecError("array size does not match its shape")
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()

    def _tensor(self, x: dict[str, Any]) -> Tensor:
        ref = x["$tensor"]
        if ref not in self.storage:
            raw = self.get_blob(ref)
            if len(raw) % 4:
                raise CodecError("tensor storage is not float32")
            self.storage[ref] = np.frombuffer(raw, dtype=np.float32).copy()
        data = self.storage[ref]
        try:
            return Tensor(data, _shape(x.get("shape")), _shape(x.get("strides")), int(x["offset"]))
        except (TypeError, ValueError) as e:
            raise CodecError(f"bad tensor: {e}") from None


def _as_list(x: Any) -> list[Any]:
    if not isinstance(x, list):
        raise CodecError("malformed value")
    return x


def _shape(x: Any) -> tuple[int, ...]:
    if not isinstance(x, list) or not all(isinstance(d, int) and d >= 0 for d in x):
        raise CodecError("bad shape")
    return tuple(x)


def split_frame(frame: bytes) -> tuple[Any, list[bytes]]:
    """Parse the frame layout into (json document, blobs), validating every length."""
    try:
        (n,) = struct.unpack_from("<I", frame, 0)
        pos = 4 + n
        doc = json.loads(frame[4:pos])
        (count,) = struct.unpack_from("<I", frame, pos)
        pos += 4
        blobs = []
        for _ in range(count):
            (m,) = struct.unpack_from("<Q", frame, pos)
            pos += 8
            if pos + m > len(frame):
                raise CodecError("truncated blob")
            blobs.append(frame[pos : pos + m])
            pos += m
    except (struct.error, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CodecError(f"malformed frame: {e}") from None
    if pos != len(frame):
        raise CodecError("trailing bytes after frame")
    return doc, blobs


def loads(
    frame: bytes,
    resolve_handle: Callable[[int], Any] | None = None,
    build: Callable[[str, list[Any], dict[str, Any], dict[str, Any]], Any] | None = None,
) -> Any:
    """Decode one frame. Without `resolve_handle`, handles decode to `Handle` objects."""
    doc, blobs = split_frame(frame)
    return _Decoder(blobs, resolve_handle, build).dec(doc)
