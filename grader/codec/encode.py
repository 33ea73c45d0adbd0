"""Encoding: a Python value into one codec frame (`dumps`).

Plain data is written as JSON; bytes, arrays and Tensor storage go into blobs; the tags
(``$t`` tuple, ``$d`` dict, ``$bytes``, ``$nd`` array, ``$tensor``, ``$same`` a Tensor
already sent, ``$h`` handle, ``$rng`` generator state, ``$seed``, ``$new`` build) are the
ones `grader.codec.decode` accepts. A Tensor's storage is sent once per message however
many views of it the value holds. A builtin scalar is read through its base type's own
method, so a subclass cannot lie about its value. What this module does not do: decide
what an unsendable object becomes (the caller's `make_handle` does; without it, it is a
`CodecError`) or bound anything (the sender is trusted; the decoder is the boundary).

Example:
    >>> from grader.codec.frame import split_frame
    >>> split_frame(dumps((1, [2.5, "x"])))[0]
    {'$t': [1, [2.5, 'x']]}
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from framework.tensor import Tensor
from grader.codec.frame import join_frame
from grader.codec.values import (
    ALLOWED_KINDS,
    MAX_DEPTH,
    Build,
    CodecError,
    Handle,
    Seeded,
    entropy,
    generator_state,
)

__all__ = ["dumps"]


def dumps(value: Any, make_handle: Callable[[Any], Handle] | None = None) -> bytes:
    """Encode `value` into one frame; unsendable objects become handles via `make_handle`.

    Raises:
        CodecError: a value nested too deeply, or one that cannot be sent (without
            `make_handle`).
    """
    enc = _Encoder(make_handle)
    doc = json.dumps(enc.enc(value), allow_nan=True, separators=(",", ":")).encode()
    return join_frame(doc, enc.blobs)


_PLAIN = (float, int, str)  # exact types only: a subclass goes through `_exact_scalar`


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
        if depth > MAX_DEPTH:
            raise CodecError("value nested too deeply")
        kind = type(x)
        if kind is float or kind is int or kind is str:  # exact builtins: nothing to unwrap
            return x
        if x is None or isinstance(x, bool | int | float | str):
            return _exact_scalar(x)
        if isinstance(x, np.generic) and x.dtype.kind in ALLOWED_KINDS:
            return x.item()
        if isinstance(x, bytes | bytearray):
            return {"$bytes": self.blob(np.frombuffer(bytes(x), dtype=np.uint8))}
        if isinstance(x, Tensor):
            return self.tensor(x)
        if isinstance(x, np.ndarray) and x.dtype.kind in ALLOWED_KINDS:
            arr = np.ndarray.view(x, np.ndarray)
            return {"$nd": self.blob(arr), "dtype": arr.dtype.str, "shape": list(arr.shape)}
        if isinstance(x, Handle):
            return {"$h": x.id, "type": x.type_name, "text": x.text, "gen": x.gen}
        if isinstance(x, np.random.Generator):
            return {"$rng": generator_state(x)}
        if isinstance(x, Seeded):
            return {"$seed": entropy(x.entropy)}
        if isinstance(x, Build):
            return {
                "$new": x.target,
                "args": [self.enc(a, depth + 1) for a in x.args],
                "kwargs": self.enc(dict(x.kwargs or {}), depth + 1),
                "attrs": self.enc(dict(x.attrs or {}), depth + 1),
            }
        if type(x) in (list, tuple) or (self.make_handle is None and isinstance(x, list | tuple)):
            if depth < MAX_DEPTH:  # exact builtin scalars as they are, without a call each
                items = [v if type(v) in _PLAIN else self.enc(v, depth + 1) for v in x]
            else:
                items = [self.enc(v, depth + 1) for v in x]
            return items if isinstance(x, list) else {"$t": items}
        if type(x) is dict:
            return {"$d": [[self.enc(k, depth + 1), self.enc(v, depth + 1)] for k, v in x.items()]}
        if self.make_handle is not None:
            h = self.make_handle(x)
            return {"$h": h.id, "type": h.type_name, "text": h.text, "gen": h.gen}
        raise CodecError(f"cannot send a {type(x).__name__} value")

    def tensor(self, x: Tensor) -> dict[str, Any]:
        """A Tensor as its storage (a blob sent once per message), shape, strides, offset."""
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
