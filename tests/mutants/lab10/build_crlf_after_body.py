"""Mutant: ends the response with one more CRLF after the body."""

# fails: build_basic, build_bytes, build_crlf

from __future__ import annotations

_solution_build = build_response


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    return _solution_build(status, reason, content_type, body) + b"\r\n"
