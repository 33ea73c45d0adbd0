"""Mutant: returns an empty prompt when there are no messages."""

# zh: 没有消息时返回空的提示词
# fails: prompt_zero, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    if not messages:
        return ""
    out = ""
    for role, content in messages:
        if not isinstance(role, str):
            raise TypeError(f"role must be a str, got {role!r}")
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown role {role!r}")
        out += f"<|{role}|>\n{content}\n"
    return out + ASSISTANT_TAG + "\n"
