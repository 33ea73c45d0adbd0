"""Mutant: skips a newline after the tag by reading output[start] without a bounds check."""

# zh: 为跳过标签后的换行读了 output[start]，没有检查下标越界
# fails: extract_whitespace

from __future__ import annotations

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def extract_response(output: str) -> str:
    start = output.rfind(ASSISTANT_TAG)
    start = 0 if start < 0 else start + len(ASSISTANT_TAG)
    if output[start] == "\n":  # IndexError when nothing follows
        start += 1
    ends = [i for i in (output.find(t, start) for t in CHAT_TAGS) if i >= 0]
    return output[start : min(ends, default=len(output))].strip()
