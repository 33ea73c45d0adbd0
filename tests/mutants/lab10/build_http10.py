"""Mutant: writes the status line as HTTP/1.0."""

# zh: 状态行写成了 HTTP/1.0
# fails: build_basic, build_bytes, build_crlf, traffic_responses

from __future__ import annotations

_solution_build = build_response


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    return b"HTTP/1.0" + _solution_build(status, reason, content_type, body)[len(b"HTTP/1.1") :]
