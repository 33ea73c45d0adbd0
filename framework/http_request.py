"""Reading one HTTP/1.1 request from a socket, with a limit and a status for every part.

`read_head` reads the request line (through a replaceable `parse_request_line`) and the
headers; `read_body` the body its ``Content-Length`` announces. Every way a client can
go wrong has its status, carried by `HttpError`: 400 a malformed line, header or length,
408 a client that stalls (the socket's timeout), 411 a POST without ``Content-Length``
(chunked bodies are not accepted), 413 a body over the limit, 414 a request line too
long, 431 too many or too long headers. `error_body` is the JSON of an error in the
OpenAI API's shape, and `discard_body` reads away a body that will not be used, so that
closing the connection does not reset it before the client reads the answer.

`SocketReader` is a socket's reading side with two clocks: each read waits at most
`stall` seconds, and none may go on past the deadline of the part being read (the whole
head, the body, the idle time between two requests), so a client that drips one byte
every few seconds (slowloris) still gets its 408 in time.

What this module deliberately does not do: write responses (`framework.http_protocol`),
route (`framework.chat_service`), decide how long each deadline is (`ServerConfig`).

Where the idea comes from: RFC 9112 §2-6 (message parsing, bare LF tolerated, a body
delimited by Content-Length) and the C course's `http_server.c`, which silently truncated
everything above 64 KiB and had no 408, 411 or 413.

Example:
    >>> import io
    >>> raw = b"POST /v1/x HTTP/1.1\\r\\nContent-Length: 2\\r\\n\\r\\nhi"
    >>> req = read_request(io.BufferedReader(io.BytesIO(raw)))
    >>> req.method, req.path, req.headers, req.body
    ('POST', '/v1/x', {'content-length': '2'}, b'hi')
"""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BufferedIOBase

from framework.http_protocol import TOKEN, parse_request_line

__all__ = [
    "DRAIN_LIMIT",
    "MAX_BODY",
    "MAX_HEADERS",
    "MAX_LINE",
    "HttpError",
    "Request",
    "SocketReader",
    "content_length",
    "discard_body",
    "error_body",
    "read_body",
    "read_head",
    "read_request",
]

MAX_LINE = 8 * 1024  # longest request line or header line, in bytes
MAX_HEADERS = 100  # most header lines in one request
MAX_BODY = 64 * 1024  # largest request body, in bytes
DRAIN_LIMIT = 1024 * 1024  # a too-large body up to this size is read and dropped before 413


class HttpError(Exception):
    """A request the server answers with an error status instead of a result.

    Attributes:
        status: the HTTP status (400, 404, 413, ...).
        message: what went wrong, for the client.
        code: a short machine-readable code (``"too_large"``), or None.
        headers: extra response headers (``Retry-After``, ``Allow``).
        param: the request field at fault, or None.
    """

    def __init__(
        self,
        status: int,
        message: str,
        code: str | None = None,
        headers: list[tuple[str, str]] | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or []
        self.param = param


def error_body(error: HttpError) -> str:
    """The JSON body of an error response, in the OpenAI API's shape.

    The type is ``invalid_request_error`` for a 4xx status and ``server_error`` otherwise.

    Example:
        >>> error_body(HttpError(404, "no such route", "not_found"))
        '{"error": {"message": "no such route", "type": "invalid_request_error", \
"param": null, "code": "not_found"}}'
    """
    kind = "invalid_request_error" if 400 <= error.status < 500 else "server_error"
    doc = {"message": error.message, "type": kind, "param": error.param, "code": error.code}
    return json.dumps({"error": doc}, ensure_ascii=False)


@dataclass
class Request:
    """One parsed request: the line's parts, headers by lowercase name, the body bytes."""

    method: str
    target: str
    version: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @property
    def path(self) -> str:
        """The target without its query string."""
        return self.target.split("?", 1)[0]


def _readline(rfile: BufferedIOBase, limit: int, what: str, status: int) -> bytes:
    """One CRLF-terminated line, without the CRLF (bare LF is tolerated, as RFC 9112 allows)."""
    try:
        raw = rfile.readline(limit + 2)
    except TimeoutError:
        raise HttpError(408, f"timed out waiting for the {what}", "timeout") from None
    if len(raw) > limit and not raw.endswith(b"\n"):
        raise HttpError(status, f"the {what} is longer than {limit} bytes", "too_long")
    if not raw.endswith(b"\n"):
        raise HttpError(400, f"the connection ended inside the {what}", "incomplete")
    return raw.rstrip(b"\n").removesuffix(b"\r")


def read_head(
    rfile: BufferedIOBase, parse_line: Callable[[str], tuple[str, str, str]] | None = None
) -> Request:
    """Read the request line and the headers of one request (not the body).

    Args:
        rfile: the connection's buffered binary reader (its socket has a timeout).
        parse_line: the request-line parser to use (default `parse_request_line`).

    Returns:
        The `Request`, its body still empty.

    Raises:
        HttpError: 400 a malformed line or header; 408 a client that stalls; 414 a request
            line over `MAX_LINE`; 431 more than `MAX_HEADERS` headers or a header too long.
    """
    parse = parse_request_line if parse_line is None else parse_line
    line = _readline(rfile, MAX_LINE, "request line", 414)
    try:
        method, target, version = parse(line.decode("ascii"))
    except (UnicodeDecodeError, ValueError, TypeError) as e:
        raise HttpError(400, f"malformed request line: {e}", "bad_request_line") from None
    return Request(method, target, version, _read_headers(rfile))


def read_body(rfile: BufferedIOBase, req: Request, max_body: int = MAX_BODY) -> bytes:
    """Read the body that the request's ``Content-Length`` announces.

    A body that is too large is left unread: the caller may `discard_body` it before it
    answers 413, so that closing the connection does not reset it under the client.

    Raises:
        HttpError: 400 a malformed length or a body cut short; 408 a client that stalls;
            411 a POST, PUT or PATCH without ``Content-Length`` (or a chunked body);
            413 a body over `max_body`.
    """
    if "transfer-encoding" in req.headers:
        raise HttpError(411, "chunked request bodies are not accepted: send Content-Length")
    size = content_length(req)
    if size is None:
        if req.method in ("POST", "PUT", "PATCH"):
            raise HttpError(411, f"a {req.method} request needs a Content-Length header")
        return b""
    if size > max_body:
        raise HttpError(413, f"the body is {size} bytes, more than {max_body}", "too_large")
    return _read_body(rfile, size)


def content_length(req: Request) -> int | None:
    """The announced body size, or None.

    Raises:
        HttpError: 400 for a value that is not a number, 413 for one of more than 15 digits.
    """
    length = req.headers.get("content-length")
    if length is None:
        return None
    if not length.isascii() or not length.isdigit():
        raise HttpError(400, f"Content-Length must be a number of bytes, got {length[:20]!r}")
    digits = length.lstrip("0")
    if len(digits) > 15:  # int() refuses > 4300 digits; no body is near 10**15 bytes anyway
        why = f"Content-Length has {len(digits)} digits: far more than any body accepted here"
        raise HttpError(413, why, "too_large")
    return int(digits or "0")


def discard_body(rfile: BufferedIOBase, req: Request) -> None:
    """Read and drop the announced body if it is at most `DRAIN_LIMIT` bytes; never raises."""
    try:
        size = content_length(req)
        if size is not None and size <= DRAIN_LIMIT:
            _read_body(rfile, size)
    except (HttpError, OSError):  # a stalled or broken connection: nothing to save
        pass


def read_request(
    rfile: BufferedIOBase,
    max_body: int = MAX_BODY,
    parse_line: Callable[[str], tuple[str, str, str]] | None = None,
) -> Request:
    """`read_head`, then `read_body`: one whole request, with the statuses of both."""
    req = read_head(rfile, parse_line)
    req.body = read_body(rfile, req, max_body)
    return req


def _read_headers(rfile: BufferedIOBase) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        raw = _readline(rfile, MAX_LINE, "headers", 431)
        if not raw:
            return headers
        name, sep, value = raw.decode("latin-1").partition(":")
        if not sep or not TOKEN.fullmatch(name):
            raise HttpError(400, f"malformed header line {raw[:60]!r}", "bad_header")
        key = name.lower()
        if key == "content-length" and key in headers and headers[key] != value.strip():
            raise HttpError(400, "two different Content-Length headers", "bad_header")
        headers[key] = value.strip(" \t")
    raise HttpError(431, f"more than {MAX_HEADERS} header lines", "too_many_headers")


def _read_body(rfile: BufferedIOBase, size: int) -> bytes:
    chunks, left = [], size
    try:
        while left > 0:
            chunk = rfile.read(left)
            if not chunk:
                raise HttpError(400, f"the body ended after {size - left} of {size} bytes")
            chunks.append(chunk)
            left -= len(chunk)
    except TimeoutError:
        raise HttpError(408, "timed out waiting for the request body", "timeout") from None
    return b"".join(chunks)


class SocketReader(io.RawIOBase):
    """A socket's reading side with a per-read stall limit and a deadline per phase.

    The phase says what is being read (``"idle"`` between requests, ``"head"``, ``"body"``,
    ``"answer"`` while the response is made); the server may `evict` a connection that
    is idle or still sending its head, and a connection so closed cannot start a new phase.

    Example:
        >>> a, b = socket.socketpair()
        >>> now = [0.0]
        >>> reader = SocketReader(a, stall=5.0, clock=lambda: now[0])
        >>> reader.expect("head", 10.0); _ = b.send(b"GET")
        >>> reader.read(10)
        b'GET'
        >>> now[0] = 11.0; reader.read(10)
        Traceback (most recent call last):
        TimeoutError: the head took longer than 10 s
        >>> a.close(); b.close()
    """

    def __init__(
        self, sock: socket.socket, stall: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.sock, self.stall, self.clock = sock, stall, clock
        sock.settimeout(stall)
        self.phase, self.since, self.seconds = "idle", clock(), 0.0
        self.deadline: float | None = None
        self.evicted = False
        self._lock = threading.Lock()

    def readable(self) -> bool:
        return True

    def expect(self, phase: str, seconds: float | None) -> None:
        """Start a phase: reads end with TimeoutError `seconds` from now (None: no deadline).

        Raises:
            ConnectionAbortedError: if the server evicted this connection.
        """
        with self._lock:
            if self.evicted:
                raise ConnectionAbortedError("the server closed this connection to make room")
            self.phase, self.since = phase, self.clock()
            self.seconds = seconds or 0.0
            self.deadline = None if seconds is None else self.since + seconds

    def evict(self, phases: tuple[str, ...] = ("idle", "head")) -> bool:
        """Close the connection under its reader if it is in one of `phases`; True if so."""
        with self._lock:
            if self.evicted or self.phase not in phases:
                return False
            self.evicted = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # its blocked read returns; its thread ends
        except OSError:
            pass
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        wait = self.stall
        if self.deadline is not None:
            wait = min(wait, self.deadline - self.clock())
            if wait <= 0:
                raise TimeoutError(f"the {self.phase} took longer than {self.seconds:g} s")
        self.sock.settimeout(wait)
        try:
            return self.sock.recv_into(buffer)
        finally:
            self.sock.settimeout(self.stall)  # writes wait at most `stall` seconds, too
