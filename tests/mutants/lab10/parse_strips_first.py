"""Mutant: strips the line first, so surrounding spaces and a trailing CRLF pass."""

# zh: 先对整行 strip()，于是首尾空格和结尾的 CRLF 都能通过
# fails: parse_malformed, parse_injection

from __future__ import annotations

_solution_parse = parse_request_line


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    return _solution_parse(line.strip())
