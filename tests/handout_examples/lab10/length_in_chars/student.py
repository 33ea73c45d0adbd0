"""Lab10 with Content-Length counted in characters (len(body)), for the handout excerpt."""

from __future__ import annotations

import re


def parse_request_line(line: str) -> tuple[str, str, str]:
    """Split a request line into (method, path, version)."""
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"CR or LF in the request line: {line!r}")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(f"expected 3 parts separated by single spaces: {line!r}")
    method, path, version = parts
    if not re.fullmatch(r"[A-Z]+", method):
        raise ValueError(f"bad method {method!r}")
    if not re.fullmatch(r"[\x21-\x7e]+", path):
        raise ValueError(f"bad path {path!r}")
    if not re.fullmatch(r"HTTP/[0-9]\.[0-9]", version):
        raise ValueError(f"bad version {version!r}")
    return method, path, version


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    """Status line, three headers, a blank line, the body."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    for v in (reason, content_type):
        if "\r" in v or "\n" in v:
            raise ValueError(f"CR or LF in a header value: {v!r}")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("utf-8") + data
