"""Mutant: Content-Length is len(body) of the str: characters, not bytes."""

# zh: Content-Length 用的是 str 的 len(body)：数的是字符，不是字节
# fails: build_bytes, traffic_responses

from __future__ import annotations


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    for name, value in (("reason", reason), ("content_type", content_type)):
        if "\r" in value or "\n" in value:
            raise ValueError(f"{name} must not contain CR or LF, got {value!r}")
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("utf-8") + data
