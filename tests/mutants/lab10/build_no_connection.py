"""Mutant: leaves out the Connection: close header."""

# zh: 漏了 Connection: close 头部
# fails: build_basic, build_bytes, build_crlf, traffic_responses

from __future__ import annotations

_solution_build = build_response


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    return _solution_build(status, reason, content_type, body).replace(b"Connection: close\r\n", b"", 1)
