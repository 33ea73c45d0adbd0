"""Mutant: moves the system messages to the front instead of keeping the order."""

# zh: 把 system 消息挪到最前面，没有保持原来的顺序
# fails: prompt_layout, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    for role, _ in messages:
        if not isinstance(role, str):
            raise TypeError(f"role must be a str, got {role!r}")
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown role {role!r}")
    first = [m for m in messages if m[0] == "system"]
    rest = [m for m in messages if m[0] != "system"]
    return "".join(f"<|{r}|>\n{c}\n" for r, c in first + rest) + ASSISTANT_TAG + "\n"
