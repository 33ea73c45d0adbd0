"""Mutant: requires the path to start with "/", refusing "*" and absolute URLs."""

# zh: 要求路径以 "/" 开头，拒绝了 "*" 和绝对 URL
# fails: parse_forms, traffic_requests

from __future__ import annotations

_solution_parse = parse_request_line


def parse_request_line(line: str) -> tuple[str, str, str]:
    method, path, version = _solution_parse(line)
    if not path.startswith("/"):
        raise ValueError(f"path must start with '/', got {path!r}")
    return method, path, version
