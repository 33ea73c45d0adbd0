"""Mutant: starts after the last tag of any kind, not after the last <|assistant|>."""

# zh: 从最后一个任意标签之后开始取，而不是最后一个 <|assistant|> 之后
# fails: extract_basic, extract_every_tag, extract_whitespace, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def extract_response(output: str) -> str:
    start = max((i + len(t) for t in CHAT_TAGS if (i := output.rfind(t)) >= 0), default=0)
    ends = [i for i in (output.find(t, start) for t in CHAT_TAGS) if i >= 0]
    return output[start : min(ends, default=len(output))].strip()
