"""Lab10 reference solution: split a request line, serialise a response."""

from __future__ import annotations

import re

METHOD = re.compile(r"[A-Z]+")  # uppercase ASCII letters only
PATH = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no space
VERSION = re.compile(r"HTTP/[0-9]\.[0-9]")  # [0-9], not \d: "١" is a \d too


def parse_request_line(line: str) -> tuple[str, str, str]:
    """'GET /health HTTP/1.1' → ('GET', '/health', 'HTTP/1.1'); anything else → ValueError."""
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"line must not contain CR or LF, got {line!r}")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(f"line must be 'METHOD PATH VERSION' with single spaces: {line!r}")
    method, path, version = parts
    if not METHOD.fullmatch(method):
        raise ValueError(f"method must be uppercase ASCII letters, got {method!r}")
    if not PATH.fullmatch(path):
        raise ValueError(f"path must be printable ASCII without spaces, got {path!r}")
    if not VERSION.fullmatch(version):
        raise ValueError(f"version must be HTTP/<digit>.<digit>, got {version!r}")
    return method, path, version


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    """Status line, Content-Type, Content-Length (bytes), Connection: close, blank line, body."""
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    for name, value in (("reason", reason), ("content_type", content_type)):
        if "\r" in value or "\n" in value:
            raise ValueError(f"{name} must not contain CR or LF, got {value!r}")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(data)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("utf-8") + data
