"""The wire format between the grader and a sandbox child: plain data only, never pickle.

A message is a JSON document plus binary blobs for array storage. What can cross:
None, bool, int, float (NaN and ±inf included), str, bytes, list, tuple, dict, numeric
numpy arrays and scalars, `framework.Tensor` (its whole storage, shape, strides and offset,
so a transposed view arrives as a view; the same Tensor object twice in one message
arrives as one object), `numpy.random.Generator` over PCG64 (its exact state, so both sides
draw the same stream), `Seeded` (a generator the receiver builds as
``np.random.default_rng(entropy)``: a few integers instead of a 128-bit state, for sweeps
of thousands of seeded calls), and `Handle` (a reference to an object that stays in the
child). Anything else is turned into a handle by the child's encoder (see
`encode(..., make_handle=...)`).

The decoder is the trust boundary: it accepts only the tags below, only numeric dtypes,
and builds nothing but plain values, numpy arrays, Tensors, Generators and Handles. Every
reply is decoded within a `Budget` (elements, items, dict size, string length, integer
digits, time); anything malformed or over budget is a `CodecError`, never another
exception.

Frame layout: u32 json length, json bytes, u32 blob count, then per blob u64 length + bytes.

Example:
    >>> frame = dumps({"a": (1, 2.5)})
    >>> loads(frame)
    {'a': (1, 2.5)}
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from framework.tensor import Tensor

__all__ = [
    "DEFAULT_BUDGET",
    "MAX_FRAME",
    "Budget",
    "Build",
    "CodecError",
    "Handle",
    "Seeded",
    "dumps",
    "loads",
]

MAX_FRAME = 512 * 1024 * 1024
_ALLOWED_KINDS = frozenset("biuf")  # bool, signed, unsigned, float
_MAX_DEPTH = 64


@dataclass(frozen=True)
class Budget:
    """What one decoded message may cost the decoder's process.

    Every array and Tensor counts its logical elements (a zero-stride view over 4 bytes that
    claims 2**29 elements counts 2**29: the grader would materialise it when comparing), and
    every reference to a blob counts again. The frame and its JSON part are bounded before
    anything is parsed: eight million ``[]`` in JSON are eight million list objects before
    any other budget is consulted. Exceeding any field raises `CodecError`.
    """

    frame: int = 192 * 1024 * 1024  # bytes of one reply frame, read before it is decoded
    json: int = 16 * 1024 * 1024  # bytes of its JSON part (parsing costs ~20x in objects)
    elements: int = 32 * 1024 * 1024  # array/Tensor elements in all (128 MiB of float32)
    items: int = 1_000_000  # list, tuple and dict entries in all
    dict_size: int = 2048  # entries of one dict (bounds the cost of colliding key hashes)
    string: int = 4 * 1024 * 1024  # characters of one string
    int_digits: int = 400  # decimal digits of one integer
    seconds: float = 5.0  # wall time for the whole decode


DEFAULT_BUDGET = Budget()


class CodecError(ValueError):
    """A message that is not valid plain data (malformed, too large or of a forbidden type)."""


@dataclass(frozen=True)
class Handle:
    """An object that lives in the sandbox child; `type_name` and `text` describe it.

    `gen` is the generation of the child that holds it: a handle is only valid in that
    child (a replaced child's objects are gone).
    """

    id: int
    type_name: str
    text: str = ""
    gen: int = 0

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


@dataclass(frozen=True)
class Seeded:
    """A generator sent as its seed: the receiver decodes ``np.random.default_rng(entropy)``.

    The stream is exactly that of ``np.random.default_rng(list(entropy))`` on either side.
    `entropy` is 1 to `MAX_ENTROPY` integers in [0, 2**128); anything else is a `CodecError`.

    Example:
        >>> g = loads(dumps(Seeded((801, 3))))
        >>> g.random() == np.random.default_rng([801, 3]).random()
        True
    """

    entropy: tuple[int, ...]

    def __repr__(self) -> str:
        return f"default_rng({list(self.entropy)})"


MAX_ENTROPY = 8  # integers of one `Seeded` (SeedSequence hashes each: bounded work)


def _entropy(x: Any) -> list[int]:
    """The entropy of a `Seeded`, validated (CodecError otherwise)."""
    if (
        not isinstance(x, list | tuple)
        or not 1 <= len(x) <= MAX_ENTROPY
        or not all(type(v) is int and 0 <= v < _PCG64_MAX for v in x)
    ):
        raise CodecError(f"a seed is 1 to {MAX_ENTROPY} integers in [0, 2**128)")
    return list(x)


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
        self.tensor_ids: dict[int, int] = {}  # id(Tensor) -> its number in this message
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
            same = self.tensor_ids.get(id(x))
            if same is not None:  # the value holds x, so its id cannot be reused meanwhile
                return {"$same": same}
            self.tensor_ids[id(x)] = len(self.tensor_ids)
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
            return {"$h": x.id, "type": x.type_name, "text": x.text, "gen": x.gen}
        if isinstance(x, np.random.Generator):
            return {"$rng": _generator_state(x)}
        if isinstance(x, Seeded):
            return {"$seed": _entropy(x.entropy)}
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
            return {"$h": h.id, "type": h.type_name, "text": h.text, "gen": h.gen}
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
        blobs: list[memoryview],
        resolve_handle: Callable[[int], Any] | None,
        build: Callable[[str, list[Any], dict[str, Any], dict[str, Any]], Any] | None,
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
        if depth > _MAX_DEPTH:
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
            return _generator(x["$rng"])
        if tag == "$seed":
            self.spend(items=1)
            return np.random.Generator(np.random.PCG64(_entropy(x["$seed"])))  # = default_rng
        if tag == "$same":
            return self._same(x["$same"])
        if tag == "$nd":
            return self._array(x)
        if tag == "$tensor":
            return self._tensor(x)
        if tag == "$h":
            hid = x["$h"]
            if not isinstance(hid, int) or isinstance(hid, bool):
                raise CodecError("bad handle id")
            if self.resolve_handle is not None:
                return self.resolve_handle(hid)
            name, text, gen = x.get("type", "object"), x.get("text", ""), x.get("gen", 0)
            if not isinstance(name, str) or not isinstance(text, str) or type(gen) is not int:
                raise CodecError("bad handle description")
            return Handle(hid, self.text(name[:200]), self.text(text[:500]), gen)
        if tag == "$new" and self.build is not None:
            target = x["$new"]
            if not isinstance(target, str):
                raise CodecError("bad build target")
            args = [self.dec(a, depth + 1) for a in _as_list(x.get("args", []))]
            kwargs = self.dec(x.get("kwargs", {"$d": []}), depth + 1)
            attrs = self.dec(x.get("attrs", {"$d": []}), depth + 1)
            if not isinstance(kwargs, dict) or not isinstance(attrs, dict):
                raise CodecError("bad build arguments")
            return self.build(target, args, kwargs, attrs)
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

    def _array(self, x: dict[str, Any]) -> np.ndarray:
        try:
            dtype = np.dtype(str(x["dtype"]))
        except TypeError:
            raise CodecError("bad dtype") from None
        if dtype.kind not in _ALLOWED_KINDS or dtype.hasobject:
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
        or len(x) > _MAX_DEPTH
        or not all(type(d) is int and 0 <= d < 2**40 for d in x)
    ):
        raise CodecError("bad shape")
    return tuple(x)


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# Tags whose dict carries fields besides the tag itself (and how many).
_EXTRA = {"$tensor": 4, "$nd": 2, "$h": 3, "$new": 3}
_KEY_TYPES = (str, int, float, bool, type(None), tuple, bytes)
_PCG64_MAX = 2**128


def _generator(state: Any) -> np.random.Generator:
    """A PCG64 `Generator` in exactly the state that was sent (nothing else is accepted)."""
    if not isinstance(state, list) or len(state) != 4 or not all(type(v) is int for v in state):
        raise CodecError("bad generator state")
    s, inc, has_uint32, uinteger = state
    if not (0 <= s < _PCG64_MAX and 0 <= inc < _PCG64_MAX and has_uint32 in (0, 1)):
        raise CodecError("bad generator state")
    if not 0 <= uinteger < 2**32:
        raise CodecError("bad generator state")
    bg = np.random.PCG64()
    bg.state = {
        "bit_generator": "PCG64",
        "state": {"state": s, "inc": inc},
        "has_uint32": has_uint32,
        "uinteger": uinteger,
    }
    return np.random.Generator(bg)


def _generator_state(g: np.random.Generator) -> list[int]:
    st = g.bit_generator.state
    if st.get("bit_generator") != "PCG64":
        raise CodecError(f"only PCG64 generators can be sent, not {st.get('bit_generator')}")
    inner = st["state"]
    return [int(inner["state"]), int(inner["inc"]), int(st["has_uint32"]), int(st["uinteger"])]


def split_frame(
    frame: bytes | bytearray, budget: Budget = DEFAULT_BUDGET
) -> tuple[Any, list[memoryview]]:
    """Parse the frame layout into (json document, blobs), validating every length.

    The blobs are views into `frame` (no copy: a frame may be large).
    """
    if len(frame) > budget.frame:
        raise CodecError(f"a frame of {len(frame)} bytes exceeds the {budget.frame}-byte limit")
    view = memoryview(frame)
    try:
        (n,) = struct.unpack_from("<I", frame, 0)
        if n > budget.json:
            raise CodecError(f"the JSON part of a frame exceeds {budget.json} bytes")
        pos = 4 + n
        doc = json.loads(bytes(view[4:pos]))
        (count,) = struct.unpack_from("<I", frame, pos)
        pos += 4
        blobs = []
        for _ in range(count):
            (m,) = struct.unpack_from("<Q", frame, pos)
            pos += 8
            if pos + m > len(frame):
                raise CodecError("truncated blob")
            blobs.append(view[pos : pos + m])
            pos += m
    except CodecError:
        raise
    except (struct.error, ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeError
        raise CodecError(f"malformed frame: {str(e)[:200]}") from None
    if pos != len(frame):
        raise CodecError("trailing bytes after frame")
    return doc, blobs


def loads(
    frame: bytes | bytearray,
    resolve_handle: Callable[[int], Any] | None = None,
    build: Callable[[str, list[Any], dict[str, Any], dict[str, Any]], Any] | None = None,
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
