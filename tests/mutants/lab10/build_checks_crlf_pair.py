"""Mutant: refuses only the pair "\\r\\n", so a bare "\\r" or "\\n" slips through."""

# zh: 只拒绝 "\r\n" 这一对，单独的 "\r" 或 "\n" 溜了过去
# fails: build_injection

from __future__ import annotations


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    for name, value in (("reason", reason), ("content_type", content_type)):
        if "\r\n" in value:
            raise ValueError(f"{name} must not contain CRLF, got {value!r}")
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(data)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("utf-8") + data
