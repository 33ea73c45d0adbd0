"""Mutant: ends the lines with "\\n" alone, as print() would."""

# zh: 行尾只写了 "\n"，像 print() 那样
# fails: build_basic, build_bytes, build_crlf

from __future__ import annotations


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    for name, value in (("reason", reason), ("content_type", content_type)):
        if "\r" in value or "\n" in value:
            raise ValueError(f"{name} must not contain CR or LF, got {value!r}")
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    head = (
        f"HTTP/1.1 {status} {reason}\n"
        f"Content-Type: {content_type}\n"
        f"Content-Length: {len(data)}\n"
        "Connection: close\n"
        "\n"
    )
    return head.encode("utf-8") + data
