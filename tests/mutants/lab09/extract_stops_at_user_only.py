"""Mutant: stops only at <|user|>; the other tags do not end the reply."""

# zh: 只在 <|user|> 处停下，其他标签不结束回复
# fails: extract_every_tag, extract_whitespace, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def extract_response(output: str) -> str:
    start = output.rfind(ASSISTANT_TAG)
    start = 0 if start < 0 else start + len(ASSISTANT_TAG)
    end = output.find("<|user|>", start)
    return output[start : end if end >= 0 else len(output)].strip()
