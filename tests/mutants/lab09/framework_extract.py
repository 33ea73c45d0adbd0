"""Mutant: hands the work to the framework's extract_response (the C lab let this pass)."""

# fails: extract_basic, extract_every_tag, extract_whitespace, roundtrip_property

from __future__ import annotations

from framework.chat import extract_response as _framework_extract


def extract_response(output: str) -> str:
    return _framework_extract(output)
