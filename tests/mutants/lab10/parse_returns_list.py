"""Mutant: returns the list from split() instead of a tuple."""

# fails: parse_basic, parse_forms, traffic_requests

from __future__ import annotations

_solution_parse = parse_request_line


def parse_request_line(line: str) -> tuple[str, str, str]:
    return list(_solution_parse(line))  # type: ignore[return-value]
