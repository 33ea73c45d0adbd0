"""A reply shown while it is generated: ids in one at a time, safe text out.

Streaming a reply token by token has two traps. A token may end in the middle of a UTF-8
character (a Chinese character is three bytes, and BPE merges do not respect character
boundaries), so decoding each token alone prints U+FFFD where the character should be.
And the reply ends at a chat tag, which may arrive as one special id (`BPETokenizer`) or
as plain text spread over several tokens (`ByteTokenizer`): printing as it comes would
show the user fragments such as ``<|us`` before the tag is recognised.

`ReplyStream.push(id)` returns only text that is final: complete characters, and never
a piece that could still become a tag. It stops at EOS, at any chat tag id, and at a tag
that appears in the text; `text` is then the whole reply, and `done` is true.

What this module deliberately does not do: no sampling, no model (the caller generates);
no whitespace stripping of the streamed pieces (`text` is the reply as written; strip it
for the final value, as `framework.chat.extract_response` does).

Where the idea comes from: Python's incremental UTF-8 decoder, and the hold-back of a
possible stop sequence that streaming servers (e.g. HF text-generation-inference) use;
the C course's `chat_stream` sent such fragments to the user.

Example:
    >>> from framework.tokenizer import ByteTokenizer
    >>> tok = ByteTokenizer()
    >>> stream = ReplyStream(tok)
    >>> [stream.push(i) for i in tok.encode("你<|e")]  # 你 is 3 bytes; <|e may be a tag
    ['', '', '你', '', '', '']
    >>> [stream.push(i) for i in tok.encode("nd|>more")], stream.text, stream.done
    (['', '', '', '', '', '', '', ''], '你', True)
"""

from __future__ import annotations

import codecs

from framework.chat import CHAT_TAGS
from framework.tokenizer import Tokenizer

__all__ = ["ReplyStream"]

_PREFIXES = frozenset(t[:k] for t in CHAT_TAGS for k in range(1, len(t)))  # "<", "<|", ...


class ReplyStream:
    """Turns the ids of a reply, one at a time, into text that is safe to show.

    Attributes:
        text: the reply so far (all of it once `done`), without the stopping tag.
        done: true once EOS or a chat tag (as an id or as text) ended the reply.
        stop_ids: the ids that end the reply: EOS and, if the tokenizer has them, the tags.
    """

    def __init__(self, tok: Tokenizer) -> None:
        self._tok = tok
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._held = ""  # decoded text not shown yet: it may still be the start of a tag
        self.text = ""
        self.done = False
        token_id = getattr(tok, "token_id", None)
        tags = {token_id(t) for t in CHAT_TAGS} if token_id is not None else set()
        self.stop_ids = frozenset({tok.eos_id, *tags})

    def push(self, token_id: int) -> str:
        """Take the next id; return the text that became final ("" if none did).

        Raises:
            TypeError, ValueError: for an id the tokenizer does not have.
        """
        if self.done:
            return ""
        if token_id in self.stop_ids:
            return self.finish()
        return self._show(self._utf8.decode(self._tok.token_bytes(token_id)))

    def finish(self) -> str:
        """End the reply (the caller stopped generating); return what was still held."""
        if self.done:
            return ""
        out = self._show(self._utf8.decode(b"", final=True), final=True)
        self.done = True
        return out

    def _show(self, piece: str, final: bool = False) -> str:
        held = self._held + piece
        cut = min((i for t in CHAT_TAGS if (i := held.find(t)) >= 0), default=-1)
        if cut >= 0:
            held, self.done = held[:cut], True
            final = True
        keep = 0 if final else _held_back(held)
        out, self._held = held[: len(held) - keep], held[len(held) - keep :]
        self.text += out
        return out


def _held_back(text: str) -> int:
    """Length of the longest suffix of `text` that could still grow into a chat tag."""
    return max((k for k in range(1, min(len(text), 12) + 1) if text[-k:] in _PREFIXES), default=0)
