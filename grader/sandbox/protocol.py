"""Framing over stream sockets: a u64 little-endian length, then that many bytes.

Every channel of the sandbox uses it: requests and replies between the grader and a child
(the payload is a `grader.codec` frame), and the control messages of the zygote and of a
freshly spawned child (the payload is a small JSON object). There is one reader,
`FrameReader`: `recv_frame` drives it with blocking reads, `Session` feeds it from a
non-blocking socket, the zygote feeds it from `recv_fds`. It never reads past the end of the
frame it is assembling, so a blocking and a non-blocking reader can take turns on a socket.

The output of a spawned child arrives on a pipe that a thread drains (Windows cannot
`select` on pipes); `sync_marker(n)` is what such a child writes to its stdout right before
its n-th reply, so the grader knows which output came before that reply.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

from grader.codec import MAX_FRAME, CodecError

__all__ = [
    "CONTROL_FRAME",
    "SYNC_PREFIX",
    "FrameReader",
    "recv_frame",
    "recv_json",
    "send_frame",
    "send_json",
    "sync_marker",
]

CONTROL_FRAME = 64 * 1024  # control messages are small JSON objects
_HEADER = 8
_CHUNK = 1 << 20
SYNC_PREFIX = b"\0minillm-sync:"


class FrameReader:
    """Assembles length-prefixed frames from bytes fed in any pieces.

    Example:
        >>> r = FrameReader()
        >>> r.feed(b"\\x03\\x00\\x00\\x00\\x00\\x00\\x00\\x00ab") is None
        True
        >>> r.feed(b"c")
        bytearray(b'abc')
    """

    def __init__(self, limit: int = MAX_FRAME) -> None:
        self.limit = limit
        self._buf = bytearray()
        self._need: int | None = None  # body length, once the header is complete

    def wanted(self) -> int:
        """How many bytes to read next without reading past the current frame."""
        if self._need is None:
            return _HEADER - len(self._buf)
        return max(min(self._need - len(self._buf), _CHUNK), 1)

    def feed(self, data: bytes) -> bytearray | None:
        """Add bytes; returns the frame once it is complete (and starts the next one).

        The frame is the reader's own buffer, handed over without a copy (a reply may be
        large).

        Raises:
            CodecError: the header announces a frame over `limit` bytes, or more bytes
                were fed than the current frame holds.
        """
        self._buf += data
        if self._need is None:
            if len(self._buf) < _HEADER:
                return None
            (need,) = struct.unpack_from("<Q", self._buf, 0)
            if need > self.limit:
                raise CodecError(f"frame of {need} bytes exceeds the {self.limit}-byte limit")
            self._need = need
            del self._buf[:_HEADER]
        if len(self._buf) < self._need:
            return None
        if len(self._buf) > self._need:
            raise CodecError("bytes past the end of a frame")
        frame, self._buf = self._buf, bytearray()
        self._need = None
        return frame


def send_frame(sock: socket.socket, frame: bytes) -> None:
    """Send one length-prefixed frame (blocking)."""
    sock.sendall(struct.pack("<Q", len(frame)) + frame)


def recv_frame(sock: socket.socket, limit: int = MAX_FRAME) -> bytearray:
    """Receive one length-prefixed frame (blocking; honours the socket's timeout).

    Raises:
        EOFError: the peer closed the connection.
        CodecError: the frame is larger than `limit`.
    """
    reader = FrameReader(limit)
    while True:
        chunk = sock.recv(reader.wanted())
        if not chunk:
            raise EOFError("peer closed the connection")
        frame = reader.feed(chunk)
        if frame is not None:
            return frame


def send_json(sock: socket.socket, msg: dict[str, Any]) -> None:
    """Send a control message."""
    send_frame(sock, json.dumps(msg).encode())


def recv_json(sock: socket.socket) -> dict[str, Any]:
    """Receive a control message (a JSON object of at most `CONTROL_FRAME` bytes)."""
    return parse_json(recv_frame(sock, CONTROL_FRAME))


def parse_json(frame: bytes | bytearray) -> dict[str, Any]:
    """Decode a control message; anything but a JSON object is a `CodecError`."""
    try:
        msg = json.loads(frame)
    except (ValueError, UnicodeDecodeError) as e:
        raise CodecError(f"malformed control message: {e}") from None
    if not isinstance(msg, dict):
        raise CodecError("a control message must be a JSON object")
    return msg


def sync_marker(n: int) -> bytes:
    """The bytes a spawned child writes to its output right before its n-th reply."""
    return SYNC_PREFIX + str(n).encode() + b"\0"
