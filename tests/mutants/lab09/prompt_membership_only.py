"""Mutant: checks only that the role is one of three, so None is a ValueError, not a TypeError."""

# zh: 只检查角色是否在三者之中，None 抛 ValueError 而不是 TypeError
# fails: prompt_errors

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    out = ""
    for role, content in messages:
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown role {role!r}")
        out += f"<|{role}|>\n{content}\n"
    return out + ASSISTANT_TAG + "\n"
