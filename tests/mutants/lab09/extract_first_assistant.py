"""Mutant: starts after the FIRST <|assistant|> (find instead of rfind)."""

# zh: 从第一个 <|assistant|> 之后开始取（用了 find 而不是 rfind）
# fails: extract_basic, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def extract_response(output: str) -> str:
    start = output.find(ASSISTANT_TAG)
    start = 0 if start < 0 else start + len(ASSISTANT_TAG)
    ends = [i for i in (output.find(t, start) for t in CHAT_TAGS) if i >= 0]
    return output[start : min(ends, default=len(output))].strip()
