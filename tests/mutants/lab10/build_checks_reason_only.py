"""Mutant: checks reason for CR and LF but forgets content_type."""

# zh: 检查了 reason 里的 CR 和 LF，却忘了 content_type
# fails: build_injection

from __future__ import annotations


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    if "\r" in reason or "\n" in reason:
        raise ValueError(f"reason must not contain CR or LF, got {reason!r}")
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(data)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("utf-8") + data
