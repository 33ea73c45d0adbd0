"""Mutant: writes the content without the newline after it."""

# zh: 内容后面没有写换行
# fails: prompt_one_turn, prompt_layout, roundtrip_property

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
        out += f"<|{role}|>\n{content}"
    return out + ASSISTANT_TAG + "\n"
