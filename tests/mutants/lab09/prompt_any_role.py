"""Mutant: makes a tag of any role: "bot" becomes <|bot|>."""

# zh: 任何角色都拼成标签："bot" 变成了 <|bot|>
# fails: prompt_errors

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    return "".join(f"<|{r}|>\n{c}\n" for r, c in messages) + ASSISTANT_TAG + "\n"
