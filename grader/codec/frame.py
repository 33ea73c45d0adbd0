"""The byte layout of one codec message: a JSON document and the blobs it refers to.

Layout: u32 json length, json bytes, u32 blob count, then per blob u64 length + bytes (all
little-endian). `join_frame` writes it; `split_frame` reads it back, checking every length
against a `Budget` before the JSON is parsed. What this module does not do: give the JSON
or the blobs a meaning (`grader.codec.encode`, `grader.codec.decode`) or move a frame over
a socket (`grader.sandbox.protocol`, which caps a frame at `MAX_FRAME`). The layout is the
usual length-prefixed one of binary protocols, with the blobs outside the JSON so that
array storage is never base64-encoded.

Example:
    >>> doc, blobs = split_frame(join_frame(b'{"$bytes":0}', [b"hi"]))
    >>> doc, [bytes(b) for b in blobs]
    ({'$bytes': 0}, [b'hi'])
"""

from __future__ import annotations

import json
import struct
from typing import Any

from grader.codec.budget import DEFAULT_BUDGET, Budget
from grader.codec.values import CodecError

__all__ = ["MAX_FRAME", "join_frame", "split_frame"]

MAX_FRAME = 512 * 1024 * 1024  # bytes of any frame on a sandbox socket


def join_frame(doc: bytes, blobs: list[bytes]) -> bytes:
    """One frame of the JSON bytes `doc` and its `blobs`."""
    parts = [struct.pack("<I", len(doc)), doc, struct.pack("<I", len(blobs))]
    for b in blobs:
        parts.append(struct.pack("<Q", len(b)))
        parts.append(b)
    return b"".join(parts)


def split_frame(
    frame: bytes | bytearray, budget: Budget = DEFAULT_BUDGET
) -> tuple[Any, list[memoryview]]:
    """Parse the frame layout into (json document, blobs), validating every length.

    The blobs are views into `frame` (no copy: a frame may be large).

    Raises:
        CodecError: a frame or JSON part over `budget`, a truncated or malformed frame.
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
