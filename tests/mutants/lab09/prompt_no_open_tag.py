"""Mutant: forgets the open <|assistant|> line at the end."""

# zh: 忘了结尾那一行开放的 <|assistant|>
# fails: prompt_one_turn, prompt_layout, prompt_zero, roundtrip_property

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
        out += f"<|{role}|>\n{content}\n"
    return out
