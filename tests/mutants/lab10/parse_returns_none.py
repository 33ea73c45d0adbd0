"""Mutant: a malformed line returns None (the C contract) instead of raising."""

# zh: 照搬 C 的约定：不合格式的行返回 None，而不是抛异常
# fails: parse_basic, parse_malformed, parse_injection

from __future__ import annotations

import re


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    parts = line.split(" ")
    if "\r" in line or "\n" in line or len(parts) != 3:
        return None  # type: ignore[return-value]
    method, path, version = parts
    if not (METHOD.fullmatch(method) and PATH.fullmatch(path) and VERSION.fullmatch(version)):
        return None  # type: ignore[return-value]
    return method, path, version
