"""Mutant: appends the open assistant turn to the caller's list."""

# zh: 把开放的 assistant 轮次追加到了调用者的列表里
# fails: prompt_layout

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    msgs = messages if isinstance(messages, list) else list(messages)
    msgs.append(("assistant", None))  # type: ignore[arg-type]
    out = ""
    for role, content in msgs:
        if not isinstance(role, str):
            raise TypeError(f"role must be a str, got {role!r}")
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown role {role!r}")
        out += f"<|{role}|>\n" if content is None else f"<|{role}|>\n{content}\n"
    return out
