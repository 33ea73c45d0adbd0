"""Mutant: returns "" when there is no <|assistant|> tag."""

# zh: 没有 <|assistant|> 标签时返回空串
# fails: extract_basic, extract_every_tag, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def extract_response(output: str) -> str:
    start = output.rfind(ASSISTANT_TAG)
    if start < 0:
        return ""
    start += len(ASSISTANT_TAG)
    ends = [i for i in (output.find(t, start) for t in CHAT_TAGS) if i >= 0]
    return output[start : min(ends, default=len(output))].strip()
