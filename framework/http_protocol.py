"""HTTP/1.1 on the wire: the request line in, the response bytes out.

The two pieces lab10 asks a student to write live here, with the same contract:
`parse_request_line` splits ``"GET /health HTTP/1.1"`` into its three parts and refuses
anything else, and `build_response` serialises a whole response (status line, the headers
``Content-Type``, ``Content-Length`` in bytes and ``Connection: close``, a blank line, the
body). `response_head` writes a status line and any headers (a stream's head, a 503's
``Retry-After``), refusing a CR or LF in any field; `rewrite_head` changes the headers of
a response already built (``Connection: keep-alive``, CORS) and can drop its body (HEAD).
`parse_host` and `host_allowed` read a ``Host`` header and match it against the names a
server answers to (the defence against DNS rebinding).

What this module deliberately does not do: read from sockets (`framework.http_request`),
route (`framework.chat_service`), decide when to keep a connection open, speak HTTP/2.

Where the idea comes from: RFC 9112 (HTTP/1.1 message syntax) and the C course's
`http_server.c`, whose request-line split checked nothing and whose responses put any
text into the head.

Example:
    >>> parse_request_line("GET /health HTTP/1.1")
    ('GET', '/health', 'HTTP/1.1')
    >>> build_response(404, "Not Found", "application/json", '{"error":"missing"}')[:38]
    b'HTTP/1.1 404 Not Found\\r\\nContent-Type: '
"""

from __future__ import annotations

import re

__all__ = [
    "REASONS",
    "TOKEN",
    "build_response",
    "host_allowed",
    "parse_host",
    "parse_request_line",
    "response_head",
    "rewrite_head",
]

REASONS = {
    200: "OK",
    204: "No Content",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    411: "Length Required",
    413: "Content Too Large",
    414: "URI Too Long",
    417: "Expectation Failed",
    421: "Misdirected Request",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}

_METHOD = re.compile(r"[A-Z]+")
_PATH = re.compile(r"[\x21-\x7e]+")  # printable ASCII without the space
_VERSION = re.compile(r"HTTP/[0-9]\.[0-9]")
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a header name (RFC 9110 token)


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
        if not TOKEN.fullmatch(_field(name, "header name")):
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


def rewrite_head(
    raw: bytes, drop: tuple[str, ...], add: list[tuple[str, str]], body: bool = True
) -> bytes:
    """A built response with some header lines dropped, others added, the body kept or not.

    Args:
        raw: a whole response (status line, headers, blank line, body).
        drop: lowercase header names, or prefixes ending in ``-`` (``"access-control-"``),
            whose lines are removed.
        add: ``(name, value)`` pairs appended after the remaining headers (checked as by
            `response_head`).
        body: False to drop everything after the blank line (the answer to HEAD).

    Raises:
        ValueError: if `raw` has no blank line ending its head, or an added field is bad.

    Example:
        >>> rewrite_head(b"HTTP/1.1 200 OK\\r\\nConnection: close\\r\\n\\r\\nhi",
        ...              ("connection",), [("Connection", "keep-alive")])
        b'HTTP/1.1 200 OK\\r\\nConnection: keep-alive\\r\\n\\r\\nhi'
    """
    end = raw.find(b"\r\n\r\n")
    if end < 0:
        raise ValueError(f"a response must end its head with a blank line, got {raw[:80]!r}")
    status_line, *lines = raw[:end].split(b"\r\n")

    def dropped(line: bytes) -> bool:
        name = line.split(b":", 1)[0].strip().decode("latin-1").lower()
        return any(name == d or (d.endswith("-") and name.startswith(d)) for d in drop)

    extra = response_head(200, "x", add)[len(b"HTTP/1.1 200 x\r\n") : -2]
    kept = b"".join(line + b"\r\n" for line in lines if not dropped(line))
    return status_line + b"\r\n" + kept + extra + b"\r\n" + (raw[end + 4 :] if body else b"")


def parse_host(value: str) -> tuple[str, int | None]:
    """Split a ``Host`` value into its lowercase name and its port (None when absent).

    Raises:
        ValueError: for an empty name, a bad port, or an IPv6 address without brackets.

    Example:
        >>> parse_host("LocalHost:8080"), parse_host("[::1]"), parse_host("example.com.")
        (('localhost', 8080), ('::1', None), ('example.com', None))
    """
    text = value.strip().lower()
    if text.startswith("["):
        name, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"a bracketed IPv6 host must be '[addr]' or '[addr]:port': {value!r}")
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text_or_empty = text.rpartition(":")
        if not sep:
            name, port_text = text, None
        else:
            port_text = port_text_or_empty
        if ":" in name:
            raise ValueError(f"an IPv6 host must be in brackets, '[addr]:port': {value!r}")
    name = name.rstrip(".")
    if not name or not re.fullmatch(r"[a-z0-9._:-]+", name):
        raise ValueError(f"a host must be a name or an address (and a port), got {value!r}")
    if port_text is None:
        return name, None
    if not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5):
        raise ValueError(f"a port must be a number 0-65535, got {port_text[:20]!r}")
    return name, int(port_text)


def host_allowed(value: str, allowed: list[tuple[str, int | None]]) -> bool:
    """Whether a ``Host`` value names one of `allowed` (a port of None there: any port).

    A Host without a port means port 80. A malformed value is not allowed.

    Example:
        >>> host_allowed("127.0.0.1:8080", [("127.0.0.1", 8080)])
        True
        >>> host_allowed("evil.example:8080", [("127.0.0.1", 8080), ("localhost", 8080)])
        False
    """
    try:
        name, port = parse_host(value)
    except ValueError:
        return False
    port = 80 if port is None else port
    return any(name == n and (p is None or p == port) for n, p in allowed)
