"""Mutant: puts reason and content_type into the head without checking for CR or LF."""

# zh: 把 reason 和 content_type 直接写进头部，没有检查 CR 或 LF
# fails: build_injection

from __future__ import annotations


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(data)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("utf-8") + data
