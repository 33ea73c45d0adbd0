"""Framing over a stream socket: a u64 length, then one codec frame."""

from __future__ import annotations

import socket
import struct

from grader.codec import MAX_FRAME, CodecError

__all__ = ["recv_frame", "send_frame"]


def send_frame(sock: socket.socket, frame: bytes) -> None:
    """Send one length-prefixed frame (blocking)."""
    sock.sendall(struct.pack("<Q", len(frame)) + frame)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("peer closed the connection")
        buf += chunk
    return bytes(buf)


def recv_frame(sock: socket.socket) -> bytes:
    """Receive one length-prefixed frame; refuses frames over MAX_FRAME."""
    (n,) = struct.unpack("<Q", _recv_exact(sock, 8))
    if n > MAX_FRAME:
        raise CodecError(f"frame of {n} bytes exceeds the {MAX_FRAME}-byte limit")
    return _recv_exact(sock, n)
