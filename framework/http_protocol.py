"""HTTP/1.1 on the wire: the request line, the request head and body, the response bytes.

The two pieces lab10 asks a student to write live here, with the same contract:
`parse_request_line` splits ``"GET /health HTTP/1.1"`` into its three parts and refuses
anything else, and `build_response` serialises a whole response (status line, the headers
``Content-Type``, ``Content-Length`` in bytes and ``Connection: close``, a blank line, the
body). Around them, what a server needs to read one request safely from a socket:
`read_request` with limits on every part (line, headers, body) and an `HttpError` that
carries the status a client should get (400, 408, 411, 413, 414, 431), and `error_body`,
the JSON error object in the OpenAI API's shape.

What this module deliberately does not do: no routing and no threads (that is
`framework.http_server`), no keep-alive (every response closes its connection), no
chunked request bodies (a POST must say its ``Content-Length``), no HTTP/2.

Where the idea comes from: RFC 9112 (HTTP/1.1 message syntax) and the C course's
`http_server.c`, whose silent truncation above 64 KiB, missing 413 and unescaped JSON
errors are replaced by explicit statuses and `json.dumps`.

Example:
    >>> parse_request_line("GET /health HTTP/1.1")
    ('GET', '/health', 'HTTP/1.1')
    >>> build_response(404, "Not Found", "application/json", '{"error":"missing"}')[:38]
    b'HTTP/1.1 404 Not Found\\r\\nContent-Type: '
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BufferedIOBase

__all__ = [
    "MAX_BODY",
    "MAX_HEADERS",
    "MAX_LINE",
    "REASONS",
    "HttpError",
    "Request",
    "build_response",
    "content_length",
    "discard_body",
    "error_body",
    "parse_request_line",
    "read_body",
    "read_head",
    "read_request",
    "response_head",
]

MAX_LINE = 8 * 1024  # longest request line or header line, in bytes
MAX_HEADERS = 100  # most header lines in one request
MAX_BODY = 64 * 1024  # largest request body, in bytes
DRAIN_LIMIT = 1024 * 1024  # a too-large body up to this size is read and dropped before 413

REASONS = {
    200: "OK",
    204: "No Content",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    411: "Length Required",
    413: "Content Too Large",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}

_METHOD = re.compile(r"[A-Z]+")
_PATH = re.compile(r"[\x21-\x7e]+")  # printable ASCII without the space
_VERSION = re.compile(r"HTTP/[0-9]\.[0-9]")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a header name (RFC 9110 token)


def parse_request_line(line: str) -> tuple[str, str, str]:
    """Split a request line into (method, path, version).

    Args:
        line: the first line of a request, without its CRLF.

    Returns:
        ``(method, path, version)``: three non-empty parts that were separated by single
        spaces; the method is uppercase ASCII letters, the path printable ASCII without
        spaces, the version ``HTTP/<digit>.<digit>``.

    Raises:
        TypeError: if `line` is not a str.
        ValueError: for anything else: CR or LF inside, not exactly two single spaces,
            an empty part, a lowercase method, a path with a space or non-ASCII, a bad version.

    Example:
        >>> parse_request_line("POST /v1/chat/completions HTTP/1.1")
        ('POST', '/v1/chat/completions', 'HTTP/1.1')
    """
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"line must not contain CR or LF, got {line[:80]!r}")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(
            f"line must be 'METHOD PATH VERSION' with single spaces, got {line[:80]!r}"
        )
    method, path, version = parts
    if not _METHOD.fullmatch(method):
        raise ValueError(f"method must be uppercase ASCII letters, got {method[:20]!r}")
    if not _PATH.fullmatch(path):
        raise ValueError(f"path must be printable ASCII without spaces, got {path[:80]!r}")
    if not _VERSION.fullmatch(version):
        raise ValueError(f"version must be HTTP/<digit>.<digit>, got {version[:20]!r}")
    return method, path, version


def _field(value: str, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if "\r" in value or "\n" in value:
        raise ValueError(f"{name} must not contain CR or LF (header injection): {value[:80]!r}")
    return value


def response_head(status: int, reason: str, headers: list[tuple[str, str]]) -> bytes:
    """The status line and header lines of a response, ending with the blank line.

    Args:
        status: a three-digit status code.
        reason: the reason phrase (``"OK"``).
        headers: ``(name, value)`` pairs, in order.

    Returns:
        ``b"HTTP/1.1 <status> <reason>\\r\\n" + b"Name: value\\r\\n"... + b"\\r\\n"``.

    Raises:
        TypeError: for a status that is not an int or a field that is not a str.
        ValueError: for a status outside 100-999, CR or LF in any field, a bad header name.

    Example:
        >>> response_head(204, "No Content", [("Connection", "close")])
        b'HTTP/1.1 204 No Content\\r\\nConnection: close\\r\\n\\r\\n'
    """
    if not isinstance(status, int) or isinstance(status, bool):
        raise TypeError(f"status must be an int, got {type(status).__name__}")
    if not 100 <= status <= 999:
        raise ValueError(f"status must be a three-digit code, got {status}")
    lines = [f"HTTP/1.1 {status} {_field(reason, 'reason')}"]
    for name, value in headers:
        if not _TOKEN.fullmatch(_field(name, "header name")):
            raise ValueError(f"header name must be a token, got {name!r}")
        lines.append(f"{name}: {_field(value, name)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    """A complete response: status line, three headers, a blank line, the body.

    Args:
        status: the status code (200, 404, ...).
        reason: the reason phrase; no CR or LF.
        content_type: the ``Content-Type`` value; no CR or LF.
        body: a str (sent as UTF-8) or bytes (sent as they are).

    Returns:
        ``HTTP/1.1 <status> <reason>``, ``Content-Type``, ``Content-Length`` (the number of
        body *bytes*) and ``Connection: close``, each line ending in CRLF, a blank line,
        then the body.

    Raises:
        TypeError: for a body that is neither str nor bytes, or a non-str field.
        ValueError: for CR or LF in `reason` or `content_type`, or a bad status.

    Example:
        >>> build_response(200, "OK", "text/plain", "你好").split(b"\\r\\n")[2]
        b'Content-Length: 6'
    """
    if isinstance(body, str):
        data = body.encode("utf-8")
    elif isinstance(body, bytes | bytearray | memoryview):
        data = bytes(body)
    else:
        raise TypeError(f"body must be a str or bytes, got {type(body).__name__}")
    headers = [
        ("Content-Type", _field(content_type, "content_type")),
        ("Content-Length", str(len(data))),
        ("Connection", "close"),
    ]
    return response_head(status, reason, headers) + data


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
    """The announced body size, or None. Raises HttpError 400 for a malformed value."""
    length = req.headers.get("content-length")
    if length is None:
        return None
    if not length.isascii() or not length.isdigit():
        raise HttpError(400, f"Content-Length must be a number of bytes, got {length[:20]!r}")
    return int(length)


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
        if not sep or not _TOKEN.fullmatch(name):
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
