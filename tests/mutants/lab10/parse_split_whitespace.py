"""Mutant: splits with str.split() (any run of whitespace), so extra spaces and tabs pass."""

# zh: 用不带参数的 str.split() 切分，多余的空格和制表符都能通过
# fails: parse_malformed

from __future__ import annotations


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"line must not contain CR or LF, got {line!r}")
    parts = line.split()
    if len(parts) != 3:
        raise ValueError(f"line must be 'METHOD PATH VERSION': {line!r}")
    method, path, version = parts
    if not METHOD.fullmatch(method):
        raise ValueError(f"bad method {method!r}")
    if not PATH.fullmatch(path):
        raise ValueError(f"bad path {path!r}")
    if not VERSION.fullmatch(version):
        raise ValueError(f"bad version {version!r}")
    return method, path, version
