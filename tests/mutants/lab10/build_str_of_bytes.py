"""Mutant: turns any body into text with str(body): a bytes body becomes "b'...'"."""

# fails: build_bytes

from __future__ import annotations

_solution_build = build_response


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    return _solution_build(status, reason, content_type, str(body))
