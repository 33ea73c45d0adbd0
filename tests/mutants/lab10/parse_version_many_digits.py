"""Mutant: the version pattern lets each digit repeat, so HTTP/11.1 and HTTP/1.10 pass."""

# zh: 版本的模式允许数字重复，HTTP/11.1 和 HTTP/1.10 都能通过
# fails: parse_malformed

from __future__ import annotations

import re


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"line must not contain CR or LF, got {line!r}")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(f"line must be 'METHOD PATH VERSION' with single spaces: {line!r}")
    method, path, version = parts
    if not METHOD.fullmatch(method):
        raise ValueError(f"method must be uppercase ASCII letters, got {method!r}")
    if not PATH.fullmatch(path):
        raise ValueError(f"path must be printable ASCII without spaces, got {path!r}")
    if not re.fullmatch(r"HTTP/[0-9]+\.[0-9]+", version):  # the bug: + allows 11.1, 1.10
        raise ValueError(f"version must be HTTP/<digit>.<digit>, got {version!r}")
    return method, path, version
