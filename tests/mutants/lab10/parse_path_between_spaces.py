"""Mutant: the path is whatever lies between the first and the last space, unchecked."""

# zh: 路径取第一个和最后一个空格之间的全部内容，不做检查
# fails: parse_malformed

from __future__ import annotations


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"line must not contain CR or LF, got {line!r}")
    method, sep, rest = line.partition(" ")
    path, sep2, version = rest.rpartition(" ")
    if not sep or not sep2 or not path:
        raise ValueError(f"line must be 'METHOD PATH VERSION': {line!r}")
    if not METHOD.fullmatch(method):
        raise ValueError(f"bad method {method!r}")
    if not VERSION.fullmatch(version):
        raise ValueError(f"bad version {version!r}")
    return method, path, version
