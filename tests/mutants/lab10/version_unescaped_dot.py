"""Mutant: the version regex HTTP/[0-9].[0-9] leaves the dot unescaped, so "HTTP/1x1" passes."""
# zh: 版本号正则里的点没有转义，两个数字之间任意字符都能通过（如 "HTTP/1x1"）

# fails: parse_malformed

import re


def parse_request_line(line):
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
    if not re.fullmatch(r"HTTP/[0-9].[0-9]", version):
        raise ValueError(f"version must be HTTP/<digit>.<digit>, got {version!r}")
    return method, path, version
