"""Lab10's checks accept unusual but correct code, and the framework twins keep the contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework.http_protocol import build_response, parse_request_line
from grader.labs import load_lab, resolve_lab
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

# One regular expression for the whole line; headers in another order, names in lower case,
# two extra headers, and the body passed through a bytearray: all of it is valid HTTP.
VARIANT = r"""
import re

LINE = re.compile(r"([A-Z]+) ([\x21-\x7e]+) (HTTP/[0-9]\.[0-9])")


def parse_request_line(line):
    if type(line) is not str:
        raise TypeError("line must be a str")
    m = LINE.fullmatch(line)
    if m is None or "\n" in line or "\r" in line:
        raise ValueError(f"malformed request line {line!r}")
    return m.group(1), m.group(2), m.group(3)


def build_response(status, reason, content_type, body):
    if any(c in v for v in (reason, content_type) for c in "\r\n"):
        raise ValueError("CR or LF in reason or content_type")
    data = bytearray(body if isinstance(body, bytes) else body.encode())
    out = bytearray(b"HTTP/1.1 %d %s\r\n" % (status, reason.encode()))
    for name, value in [
        ("server", "miniLLM"),
        ("connection", "close"),
        ("content-length", str(len(data))),
        ("Access-Control-Allow-Origin", "*"),
        ("content-type", content_type),
    ]:
        out += f"{name}:{value}\r\n".encode()
    return bytes(out + b"\r\n" + data)
"""


def test_an_unusual_but_correct_implementation_passes(tmp_path: Path, sandbox: Sandbox) -> None:
    impl = tmp_path / "student.py"
    impl.write_text(VARIANT, encoding="utf-8")
    result = run_tests(load_lab(resolve_lab("lab10")), impl, sandbox)
    assert result.passed, [(t.id, t.status, [c.message for c in t.checks]) for t in result.tests]


@pytest.mark.parametrize(
    "line",
    ["GET /x", "GET  /x HTTP/1.1", "get /x HTTP/1.1", "GET /x HTTP/1.1\r", "GET /é HTTP/1.1", ""],
)
def test_the_framework_parser_refuses_what_the_lab_refuses(line: str) -> None:
    with pytest.raises(ValueError):
        parse_request_line(line)


def test_the_framework_builder_counts_bytes_and_refuses_injection() -> None:
    raw = build_response(200, "OK", "text/plain; charset=utf-8", "你好")
    head, body = raw.split(b"\r\n\r\n", 1)
    assert b"Content-Length: 6" in head.split(b"\r\n") and body == "你好".encode()
    with pytest.raises(ValueError, match="content_type"):
        build_response(200, "OK", "a\nb", "")
    with pytest.raises(TypeError, match="body"):
        build_response(200, "OK", "text/plain", None)  # type: ignore[arg-type]
