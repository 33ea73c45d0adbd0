"""Mutant: writes the blank line only when there is a body."""

# zh: 只有正文不为空时才写头部后面的空行
# fails: build_bytes

from __future__ import annotations

_solution_build = build_response


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    raw = _solution_build(status, reason, content_type, body)
    return raw if body else raw[: -len(b"\r\n")]
