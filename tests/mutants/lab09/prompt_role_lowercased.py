"""Mutant: accepts "User" by lower-casing the role first."""

# zh: 先把角色转成小写，于是接受了 "User"
# fails: prompt_errors

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    out = ""
    for role, content in messages:
        role = role.lower() if isinstance(role, str) else role
        if not isinstance(role, str):
            raise TypeError(f"role must be a str, got {role!r}")
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown role {role!r}")
        out += f"<|{role}|>\n{content}\n"
    return out + ASSISTANT_TAG + "\n"
