"""Lab09 — the chat format: turn messages into a prompt, and pull the reply out of the output.

A chat model reads one flat text in which tags say who is speaking:

    <|system|>             the rules of the conversation (optional, usually first)
    <|user|>               what the person wrote
    <|assistant|>          what the model wrote
    <|end|>                the end of a message (the model writes it when its reply is done)

    format_prompt([("user", "hi")])  ->  "<|user|>\\nhi\\n<|assistant|>\\n"
    extract_response("...<|assistant|>\\nhello!\\n<|end|>...")  ->  "hello!"

The prompt ends with an open `<|assistant|>` line: the model continues from there, and
whatever it writes until the next tag is its reply. Run `make test` in this folder after
every change; `TASK.md` explains each function.

Plain string operations are enough (`str.find`, `str.rfind`, slicing, `str.strip`). The
tag constants below come from `framework.chat`; its functions `format_prompt`,
`format_chat_prompt`, `format_training_example` and `extract_response` are off limits here:
the point is to write them.
"""

from __future__ import annotations

from collections.abc import Sequence

from framework.chat import ASSISTANT_TAG, CHAT_TAGS, END_TAG, SYSTEM_TAG, USER_TAG  # noqa: F401

ROLES = ("system", "user", "assistant")  # the tag of role r is "<|" + r + "|>"


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    """The prompt for the next reply.

    Each (role, content) becomes "<|role|>\\n" + content + "\\n", in the given order, with
    the content exactly as it is (not stripped). Then "<|assistant|>\\n" is appended, also
    when there are no messages at all.

    Args:
        messages: (role, content) pairs; role is "system", "user" or "assistant".
            A list or tuple of pairs (each a tuple or a list); not modified.

    Returns:
        The prompt text. Example: [("system", "Be brief."), ("user", "hi")] →
        "<|system|>\\nBe brief.\\n<|user|>\\nhi\\n<|assistant|>\\n".

    Raises:
        TypeError: if a role is not a str (None, 1, ...).
        ValueError: if a role is a str but not one of the three ("bot", "User", "").
    """
    # BEGIN SOLUTION: check each role, build "<|role|>\n" + content + "\n", append the open tag.
    parts = []
    for role, content in messages:
        if not isinstance(role, str):
            raise TypeError(f"role must be a str, got {type(role).__name__} {role!r}")
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {role!r}")
        parts.append("<|" + role + "|>\n" + content + "\n")
    parts.append(ASSISTANT_TAG + "\n")
    return "".join(parts)
    # END SOLUTION


def extract_response(output: str) -> str:
    """The model's reply in its raw output.

    Start right after the LAST "<|assistant|>" (at the very beginning if there is none),
    stop before the first tag that follows (any of the four tags above), and strip the
    surrounding whitespace (spaces, tabs, newlines). Text that only looks like a tag,
    such as "<|end" or "<|foo|>", is ordinary text.

    Args:
        output: the text a model produced, prompt included.

    Returns:
        The reply, possibly "". Example:
        "<|user|>\\nhi\\n<|assistant|>\\n hello! \\n<|end|>\\n<|user|>" → "hello!".
    """
    # BEGIN SOLUTION: rfind the assistant tag, find the nearest following tag, slice, strip.
    start = output.rfind(ASSISTANT_TAG)
    start = 0 if start < 0 else start + len(ASSISTANT_TAG)
    end = len(output)
    for tag in CHAT_TAGS:
        at = output.find(tag, start)
        if at >= 0:
            end = min(end, at)
    return output[start:end].strip()
    # END SOLUTION
