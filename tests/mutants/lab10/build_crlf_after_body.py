"""Mutant: ends the response with one more CRLF after the body."""

# zh: 在正文之后又多写了一个 CRLF
# fails: build_basic, build_bytes, build_crlf

from __future__ import annotations

_solution_build = build_response


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    return _solution_build(status, reason, content_type, body) + b"\r\n"
