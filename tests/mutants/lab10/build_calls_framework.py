"""Mutant: builds the response with the framework's build_response."""

# zh: 用框架的 build_response 生成响应
# fails: build_basic, build_bytes, build_crlf, build_injection, traffic_responses

from __future__ import annotations

from framework import http_protocol


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    return http_protocol.build_response(status, reason, content_type, body)
