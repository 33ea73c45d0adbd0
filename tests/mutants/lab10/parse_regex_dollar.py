"""Mutant: validates with ^...$ and \\d, no CR/LF check: "$" matches before a final "\\n"."""

# zh: 用 ^...$ 和 \d 校验、不查 CR/LF："$" 能匹配结尾的 "\n" 之前
# fails: parse_malformed, parse_injection

from __future__ import annotations

import re


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(f"line must be 'METHOD PATH VERSION': {line!r}")
    method, path, version = parts
    if not re.match(r"^[A-Z]+$", method):
        raise ValueError(f"bad method {method!r}")
    if not re.match(r"^[\x21-\x7e]+$", path):
        raise ValueError(f"bad path {path!r}")
    if not re.match(r"^HTTP/\d\.\d$", version):
        raise ValueError(f"bad version {version!r}")
    return method, path, version
