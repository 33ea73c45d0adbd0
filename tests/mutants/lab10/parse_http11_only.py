"""Mutant: accepts only the version "HTTP/1.1"."""

# zh: 只接受 "HTTP/1.1" 这一个版本
# fails: parse_forms

from __future__ import annotations

_solution_parse = parse_request_line


def parse_request_line(line: str) -> tuple[str, str, str]:
    method, path, version = _solution_parse(line)
    if version != "HTTP/1.1":
        raise ValueError(f"version must be HTTP/1.1, got {version!r}")
    return method, path, version
