"""Mutant: returns the list from split() instead of a tuple."""

# zh: 返回 split() 得到的列表，而不是元组
# fails: parse_basic, parse_forms, traffic_requests

from __future__ import annotations

_solution_parse = parse_request_line


def parse_request_line(line: str) -> tuple[str, str, str]:
    return list(_solution_parse(line))  # type: ignore[return-value]
