"""Mutant: allows only letters, digits and / . _ - in the path (no query, no punctuation)."""

# zh: 路径只允许字母、数字和 / . _ -（查询串和标点都不行）
# fails: parse_forms, traffic_requests

from __future__ import annotations

import re


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"line must not contain CR or LF, got {line!r}")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(f"line must be 'METHOD PATH VERSION': {line!r}")
    method, path, version = parts
    if not METHOD.fullmatch(method):
        raise ValueError(f"bad method {method!r}")
    if not re.fullmatch(r"[A-Za-z0-9/._-]+", path):
        raise ValueError(f"bad path {path!r}")
    if not VERSION.fullmatch(version):
        raise ValueError(f"bad version {version!r}")
    return method, path, version
