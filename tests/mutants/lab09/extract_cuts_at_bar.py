"""Mutant: cuts at the first "<|", as if anything that starts like a tag were one."""

# zh: 在第一个 "<|" 处截断，把看起来像标签开头的文字都当成了标签
# fails: extract_every_tag, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def extract_response(output: str) -> str:
    start = output.rfind(ASSISTANT_TAG)
    start = 0 if start < 0 else start + len(ASSISTANT_TAG)
    end = output.find("<|", start)
    return output[start : end if end >= 0 else len(output)].strip()
