"""Mutant: strips only newlines (strip("\\n")), not spaces, tabs or \\r."""

# zh: 只去掉换行（strip("\n")），空格、制表符和 \r 都留着
# fails: extract_basic, extract_whitespace, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def extract_response(output: str) -> str:
    start = output.rfind(ASSISTANT_TAG)
    start = 0 if start < 0 else start + len(ASSISTANT_TAG)
    ends = [i for i in (output.find(t, start) for t in CHAT_TAGS) if i >= 0]
    return output[start : min(ends, default=len(output))].strip("\n")
