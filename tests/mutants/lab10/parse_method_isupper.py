"""Mutant: checks the method with str.isupper(), which is True for "G3T" and "GÉT" too."""

# zh: 用 str.isupper() 检查方法，"G3T" 和 "GÉT" 也得到 True
# fails: parse_malformed

from __future__ import annotations


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"line must not contain CR or LF, got {line!r}")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(f"line must be 'METHOD PATH VERSION': {line!r}")
    method, path, version = parts
    if not method.isupper():
        raise ValueError(f"bad method {method!r}")
    if not PATH.fullmatch(path):
        raise ValueError(f"bad path {path!r}")
    if not VERSION.fullmatch(version):
        raise ValueError(f"bad version {version!r}")
    return method, path, version
