"""The chat format: role tags, prompts, training examples, the reply, and a conversation.

A chat model sees one flat text in which tags mark who speaks. The tags are
``<|system|>``, ``<|user|>``, ``<|assistant|>`` and ``<|end|>``; `BPETokenizer` has each
as a single special id. Two layouts:

- `format_prompt(messages)`, the course's prompt (lab09): each ``(role, content)`` is
  ``"<|role|>\\n" + content + "\\n"``, then an open ``"<|assistant|>\\n"`` for the reply;
- `format_training_example(messages)`: the same, with each finished message closed by
  ``"<|end|>\\n"``, so a model trained on it learns to end its reply with ``<|end|>``.
  `format_chat_prompt` is that layout plus the open assistant tag: what `Conversation`
  feeds a model trained that way.

`extract_response` takes the reply out of raw model output: the text after the last
``<|assistant|>``, cut at the next tag, stripped. `Conversation` keeps the messages and a
system prompt, and builds prompt ids that fit a context budget by dropping the oldest
turns first.

What this module deliberately does not do: no generation (that is `framework.generate`)
and no tokenisation of its own: `encode_messages` asks the tokenizer, and with a
`BPETokenizer` the tags become special ids while the contents are encoded as plain text,
so a user who types ``<|end|>`` cannot forge a tag.

Where the idea comes from: the C course's `chat.c` (same tags and `extract_response`), with
its defects fixed: the prompt ends with the assistant tag, an unknown role is an error, the
history is trimmed by tokens, not by a message count. The closed layout is Phi-3's.

Example:
    >>> format_prompt([("user", "hi")])
    '<|user|>\\nhi\\n<|assistant|>\\n'
    >>> extract_response("<|user|>\\nhi\\n<|assistant|>\\n hello! \\n<|end|>\\n<|user|>")
    'hello!'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "ASSISTANT_TAG",
    "CHAT_TAGS",
    "END_TAG",
    "ROLES",
    "SYSTEM_TAG",
    "USER_TAG",
    "Conversation",
    "encode_messages",
    "extract_response",
    "format_chat_prompt",
    "format_prompt",
    "format_training_example",
    "role_tag",
]

SYSTEM_TAG, USER_TAG, ASSISTANT_TAG, END_TAG = "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"
CHAT_TAGS = (SYSTEM_TAG, USER_TAG, ASSISTANT_TAG, END_TAG)
ROLES = ("system", "user", "assistant")
_ANY_TAG = re.compile("|".join(re.escape(t) for t in CHAT_TAGS))

Message = tuple[str, str]


class _Encoder(Protocol):
    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]: ...


def role_tag(role: str) -> str:
    """The tag of `role`: ``"user"`` → ``"<|user|>"``.

    Raises:
        TypeError: if `role` is not a str.
        ValueError: if it is not one of ``system``, ``user``, ``assistant``.
    """
    if not isinstance(role, str):
        raise TypeError(f"role must be a str, got {type(role).__name__} {role!r}")
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    return f"<|{role}|>"


def _messages(messages: Any) -> list[Message]:
    """Check `messages` is a sequence of (role, content) pairs of strs with known roles."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a sequence of (role, content), got {messages!r:.60}")
    out = []
    for k, m in enumerate(messages):
        if type(m) is tuple and len(m) == 2 and type(m[1]) is str:  # the common case, fast
            role_tag(m[0])
            out.append(m)
            continue
        if isinstance(m, str | bytes) or not isinstance(m, Sequence) or len(m) != 2:
            raise TypeError(f"messages[{k}] must be a (role, content) pair, got {m!r:.60}")
        role, content = m
        role_tag(role)
        if not isinstance(content, str):
            raise TypeError(f"messages[{k}] content must be a str, got {type(content).__name__}")
        out.append((role, content))
    return out


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    """The prompt for the next reply: each message as ``"<|role|>\\n" + content + "\\n"``.

    Args:
        messages: ``(role, content)`` pairs in order; roles system, user, assistant.

    Returns:
        The messages in order, then ``"<|assistant|>\\n"`` (alone for no messages).

    Raises:
        TypeError: if a role or content is not a str, or a message is not a pair.
        ValueError: if a role is unknown.

    Example:
        >>> format_prompt([])
        '<|assistant|>\\n'
    """
    body = "".join(f"{role_tag(r)}\n{c}\n" for r, c in _messages(messages))
    return body + ASSISTANT_TAG + "\n"


def format_training_example(messages: Sequence[tuple[str, str]]) -> str:
    """Finished messages as training text: ``"<|role|>\\n" + content + "\\n<|end|>\\n"`` each.

    Raises:
        TypeError, ValueError: like `format_prompt`.

    Example:
        >>> format_training_example([("user", "1+1?"), ("assistant", "2")])
        '<|user|>\\n1+1?\\n<|end|>\\n<|assistant|>\\n2\\n<|end|>\\n'
    """
    return "".join(f"{role_tag(r)}\n{c}\n{END_TAG}\n" for r, c in _messages(messages))


def format_chat_prompt(messages: Sequence[tuple[str, str]]) -> str:
    """`format_training_example` of the history, then the open ``"<|assistant|>\\n"``.

    A model trained on `format_training_example` text sees its own layout here, and its
    reply is whatever it writes before ``<|end|>``.

    Raises:
        TypeError, ValueError: like `format_prompt`.
    """
    return format_training_example(messages) + ASSISTANT_TAG + "\n"


def extract_response(output: str) -> str:
    """The reply in raw model output.

    The text after the last ``<|assistant|>`` (all of `output` if there is none), cut
    before the next of the four tags, with surrounding whitespace stripped.

    Raises:
        TypeError: if `output` is not a str.

    Example:
        >>> extract_response("<|assistant|>\\nA<|user|>\\nB<|assistant|>\\n B \\n<|end|>")
        'B'
    """
    if not isinstance(output, str):
        raise TypeError(f"output must be a str, got {type(output).__name__}")
    start = output.rfind(ASSISTANT_TAG)
    rest = output if start < 0 else output[start + len(ASSISTANT_TAG) :]
    return _ANY_TAG.split(rest, maxsplit=1)[0].strip()


def encode_messages(
    tok: _Encoder, messages: Sequence[tuple[str, str]], *, open_reply: bool = True
) -> list[int]:
    """Ids of `format_chat_prompt` (or of `format_training_example` if not `open_reply`).

    With a tokenizer that has chat tags (`BPETokenizer`) each tag is its special id and
    each content is encoded by `encode_ordinary`, so a tag typed inside a content stays
    plain text. Any other tokenizer encodes the formatted text. No BOS, no EOS.

    Raises:
        TypeError, ValueError: like `format_prompt`.
    """
    msgs = _messages(messages)
    ordinary = getattr(tok, "encode_ordinary", None)
    token_id = getattr(tok, "token_id", None)
    if ordinary is None or token_id is None:
        text = format_chat_prompt(msgs) if open_reply else format_training_example(msgs)
        return tok.encode(text)
    ids: list[int] = []
    for role, content in msgs:
        ids += [token_id(role_tag(role)), *ordinary(f"\n{content}\n"), token_id(END_TAG)]
        ids += ordinary("\n")
    if open_reply:
        ids += [token_id(ASSISTANT_TAG), *ordinary("\n")]
    return ids


@dataclass
class Conversation:
    """The messages of one chat so far, and an optional system prompt.

    Attributes:
        system_prompt: sent first in every prompt when not empty; `reset` keeps it.
        messages: ``(role, content)`` pairs, oldest first.

    Example:
        >>> conv = Conversation("Be brief.")
        >>> conv.add("user", "hi")
        >>> conv.render()
        '<|system|>\\nBe brief.\\n<|end|>\\n<|user|>\\nhi\\n<|end|>\\n<|assistant|>\\n'
    """

    system_prompt: str = ""
    messages: list[Message] = field(default_factory=list)

    def add(self, role: str, content: str) -> None:
        """Append one message. Raises TypeError/ValueError like `format_prompt`."""
        self.messages.append(_messages([(role, content)])[0])

    def reset(self) -> None:
        """Forget the messages; keep the system prompt."""
        self.messages.clear()

    def _with_system(self, messages: list[Message]) -> list[Message]:
        return [("system", self.system_prompt), *messages] if self.system_prompt else messages

    def render(self) -> str:
        """The whole conversation as `format_chat_prompt` text (no trimming)."""
        return format_chat_prompt(self._with_system(self.messages))

    def prompt_ids(self, tok: _Encoder, budget: int, *, add_bos: bool = True) -> list[int]:
        """Ids of the prompt for the next reply, at most `budget` long.

        Whole turns are dropped from the oldest (the kept history starts at a user
        message); the system prompt and the newest message stay. If those alone are too
        long, the system prompt goes too, then the newest message loses its oldest text.

        Args:
            tok: the model's tokenizer.
            budget: the most ids the prompt may take (context length minus reply room).
            add_bos: put the tokenizer's BOS id first (counted in `budget`).

        Returns:
            ``[BOS] + encode_messages(...)`` of the kept messages.

        Raises:
            ValueError: if there are no messages, or not even the tags fit in `budget`.
        """
        if not self.messages:
            raise ValueError("the conversation has no messages to answer")
        head = tok.encode("", add_bos=True) if add_bos else []
        room = budget - len(head)
        msgs = self.messages
        for start in [0, *(i for i in range(1, len(msgs)) if msgs[i][0] == "user")]:
            ids = encode_messages(tok, self._with_system(msgs[start:]))
            if len(ids) <= room:
                return head + ids
        return head + _fit_tail(tok, msgs[-1], room)


def _fit_tail(tok: _Encoder, message: Message, room: int) -> list[int]:
    """Ids of `message` alone, keeping the longest suffix of its content that fits."""
    role, content = message
    lo, hi = 0, len(content)  # find the smallest cut such that the rest fits
    if len(encode_messages(tok, [(role, "")])) > room:
        raise ValueError(f"budget {room} is too small for even an empty {role} message")
    while lo < hi:
        mid = (lo + hi) // 2
        if len(encode_messages(tok, [(role, content[mid:])])) <= room:
            hi = mid
        else:
            lo = mid + 1
    return encode_messages(tok, [(role, content[lo:])])
