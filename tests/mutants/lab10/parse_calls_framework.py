"""Mutant: hands the line to the framework's parser instead of parsing it."""

# zh: 把请求行交给框架的解析器，没有自己解析
# fails: parse_basic, parse_forms, parse_malformed, parse_injection, traffic_requests

from __future__ import annotations

from framework.http_protocol import parse_request_line as _framework_parse


def parse_request_line(line: str) -> tuple[str, str, str]:
    return _framework_parse(line)
