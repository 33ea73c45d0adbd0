"""Mutant: returns the response as a str, not bytes."""

# zh: 把响应作为 str 返回，而不是 bytes
# fails: build_basic, build_bytes, build_crlf, traffic_responses

from __future__ import annotations


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    for name, value in (("reason", reason), ("content_type", content_type)):
        if "\r" in value or "\n" in value:
            raise ValueError(f"{name} must not contain CR or LF, got {value!r}")
    return (  # type: ignore[return-value]
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(text.encode('utf-8'))}\r\n"
        "Connection: close\r\n"
        "\r\n" + text
    )
