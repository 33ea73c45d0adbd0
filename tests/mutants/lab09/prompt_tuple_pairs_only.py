"""Mutant: skips any message that is not a tuple, such as [role, content]."""

# zh: 跳过不是元组的消息，例如 [role, content] 列表
# fails: prompt_layout

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    out = ""
    for m in messages:
        if not isinstance(m, tuple):
            continue
        role, content = m
        if not isinstance(role, str):
            raise TypeError(f"role must be a str, got {role!r}")
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown role {role!r}")
        out += f"<|{role}|>\n{content}\n"
    return out + ASSISTANT_TAG + "\n"
