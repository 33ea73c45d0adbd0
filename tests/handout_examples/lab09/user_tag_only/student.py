"""Lab09 with one bug: the reply stops only at <|user|>, as the C checks allowed."""

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS, END_TAG, SYSTEM_TAG, USER_TAG  # noqa: F401

ROLES = ("system", "user", "assistant")  # the tag of role r is "<|" + r + "|>"


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    """Each (role, content) as "<|role|>\\n" + content + "\\n", then "<|assistant|>\\n"."""
    parts = []
    for role, content in messages:
        if not isinstance(role, str):
            raise TypeError(f"role must be a str, got {type(role).__name__} {role!r}")
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {role!r}")
        parts.append("<|" + role + "|>\n" + content + "\n")
    parts.append(ASSISTANT_TAG + "\n")
    return "".join(parts)


def extract_response(output: str) -> str:
    """The text after the last assistant tag, up to the next <|user|> (only), stripped."""
    start = output.rfind(ASSISTANT_TAG)
    start = 0 if start < 0 else start + len(ASSISTANT_TAG)
    end = output.find(USER_TAG, start)
    return output[start : end if end >= 0 else len(output)].strip()
