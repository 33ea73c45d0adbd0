"""Mutant: joins with "\\n", then replaces every "\\n" by "\\r\\n", the body's included."""

# zh: 用 "\n" 拼接后把所有 "\n" 换成 "\r\n"，连正文也改了
# fails: build_bytes, build_crlf, traffic_responses

from __future__ import annotations


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    for name, value in (("reason", reason), ("content_type", content_type)):
        if "\r" in value or "\n" in value:
            raise ValueError(f"{name} must not contain CR or LF, got {value!r}")
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    lines = [
        f"HTTP/1.1 {status} {reason}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(data)}",
        "Connection: close",
        "",
        "",
    ]
    return ("\n".join(lines).encode("utf-8") + data).replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
