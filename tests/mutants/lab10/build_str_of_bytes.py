"""Mutant: turns any body into text with str(body): a bytes body becomes "b'...'"."""

# zh: 用 str(body) 把正文变成文本：bytes 正文变成了 "b'...'"
# fails: build_bytes

from __future__ import annotations

_solution_build = build_response


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    return _solution_build(status, reason, content_type, str(body))
