"""Mutant: quietly decodes a bytes line instead of refusing it."""

# zh: 悄悄把 bytes 的请求行解码，而不是拒绝它
# fails: parse_injection

from __future__ import annotations

_solution_parse = parse_request_line


def parse_request_line(line: str) -> tuple[str, str, str]:
    if isinstance(line, bytes):
        line = line.decode("latin-1")
    return _solution_parse(line)
