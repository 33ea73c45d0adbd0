"""Mutant: upper-cases the method instead of refusing a lowercase one."""

# zh: 把方法转成大写，而不是拒绝小写的方法
# fails: parse_malformed

from __future__ import annotations

_solution_parse = parse_request_line


def parse_request_line(line: str) -> tuple[str, str, str]:
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    method, sep, rest = line.partition(" ")
    return _solution_parse(method.upper() + sep + rest)
