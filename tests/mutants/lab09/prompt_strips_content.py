"""Mutant: strips each content, which the prompt must keep exactly."""

# zh: 对每段内容做了 strip()，而提示词要原样保留内容
# fails: prompt_layout, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    out = ""
    for role, content in messages:
        if not isinstance(role, str):
            raise TypeError(f"role must be a str, got {role!r}")
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown role {role!r}")
        out += f"<|{role}|>\n{content.strip()}\n"
    return out + ASSISTANT_TAG + "\n"
