"""Mutant: without an assistant tag, returns the whole text, tags and all."""

# zh: 没有 assistant 标签时返回整段文本，连标签一起
# fails: extract_every_tag

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def extract_response(output: str) -> str:
    start = output.rfind(ASSISTANT_TAG)
    if start < 0:
        return output.strip()
    start += len(ASSISTANT_TAG)
    ends = [i for i in (output.find(t, start) for t in CHAT_TAGS) if i >= 0]
    return output[start : min(ends, default=len(output))].strip()
