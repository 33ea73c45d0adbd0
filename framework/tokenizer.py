"""Byte-level tokenizer: text to token ids and back, through UTF-8 bytes.

The vocabulary has 260 ids: four special tokens (PAD 0, UNK 1, BOS 2, EOS 3), then one id
per byte value, ``id = byte + 4``. Every Python `str` has a UTF-8 encoding, so any text,
Chinese and emoji included, encodes without UNK and decodes back to itself. A Chinese
character costs three ids and most emoji four: that is the price of a fixed 260-entry
vocabulary, and what BPE (lab12) buys back.

What this module deliberately does not do: no merges, no normalisation (NFC/NFKC), no
chat tags as special tokens; those belong to `BPETokenizer`. `Tokenizer` is the surface
both share (`encode`, `decode`, `vocab_size`, the special ids, `token_bytes`), so code
written against it (sampling, chat) works with either.

Where the idea comes from: the C course's `tokenizer.c` (four specials, then byte + 4),
with its silent failures turned into errors: an unknown id raises instead of vanishing, a
malformed vocabulary file raises instead of half-loading. The byte fallback is the same
idea as GPT-2's byte-level BPE and karpathy/minbpe's 256 base tokens.

Example:
    >>> tok = ByteTokenizer()
    >>> tok.encode("Hi", add_bos=True)
    [2, 76, 109]
    >>> tok.encode("你")  # three UTF-8 bytes: e4 bd a0
    [232, 193, 164]
    >>> tok.decode([2, 76, 109, 3])
    'Hi'
    >>> tok.token_str(14), tok.token_str(3)
    ('\\\\n', '<EOS>')
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "BOS_ID",
    "BYTE_VOCAB_SIZE",
    "EOS_ID",
    "NUM_SPECIAL",
    "PAD_ID",
    "SPECIAL_TOKENS",
    "UNK_ID",
    "ByteTokenizer",
    "Tokenizer",
]

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
SPECIAL_TOKENS = ("<PAD>", "<UNK>", "<BOS>", "<EOS>")  # display names of ids 0-3
NUM_SPECIAL = len(SPECIAL_TOKENS)  # byte b is id b + NUM_SPECIAL
BYTE_VOCAB_SIZE = NUM_SPECIAL + 256
REPLACEMENT = "\ufffd".encode()  # what UNK decodes to (U+FFFD, bytes ef bf bd)

_FORMAT = "minillm-tokenizer"
_VERSION = 1
_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\"}


def _as_id(value: Any, name: str) -> int:
    """`value` as a plain int; bool, float, str and friends are a TypeError."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def _byte_str(b: int) -> str:
    """Display form of one byte: printable ASCII as itself, else an escape like ``\\x00``."""
    if b in _ESCAPES:
        return _ESCAPES[b]
    return chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}"


class Tokenizer(ABC):
    """What every tokenizer of the course offers: ids 0-3 are PAD, UNK, BOS, EOS.

    A subclass supplies `vocab_size`, `encode` and `token_bytes` (the bytes an ordinary id
    stands for); `decode`, `is_special`, `check_id` and `token_str` are shared.
    """

    pad_id: ClassVar[int] = PAD_ID
    unk_id: ClassVar[int] = UNK_ID
    bos_id: ClassVar[int] = BOS_ID
    eos_id: ClassVar[int] = EOS_ID
    special_tokens: ClassVar[tuple[str, ...]] = SPECIAL_TOKENS

    @property
    @abstractmethod
    def vocab_size(self) -> int:
        """Number of ids; valid ids are ``0 .. vocab_size - 1``."""

    @abstractmethod
    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Token ids of `text`, optionally wrapped in BOS ... EOS."""

    @abstractmethod
    def _piece(self, token_id: int) -> bytes:
        """The bytes of an ordinary (non-special) id that `check_id` already accepted."""

    def check_id(self, token_id: Any, name: str = "token_id") -> int:
        """Return `token_id` as an int after checking it is a valid id of this vocabulary.

        Raises:
            TypeError: if it is not an int (bool is refused too).
            ValueError: if it is outside ``[0, vocab_size)``.
        """
        i = _as_id(token_id, name)
        if not 0 <= i < self.vocab_size:
            raise ValueError(f"{name} must be in [0, {self.vocab_size}), got {i}")
        return i

    def is_special(self, token_id: int) -> bool:
        """True for PAD, UNK, BOS and EOS. Raises like `check_id` for an invalid id."""
        return self.check_id(token_id) < len(self.special_tokens)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes `token_id` contributes to decoded text.

        UNK gives the UTF-8 bytes of U+FFFD, PAD/BOS/EOS give ``b""``, any other id its
        bytes (one byte for `ByteTokenizer`). Raises like `check_id`.
        """
        i = self.check_id(token_id)
        if i == self.unk_id:
            return REPLACEMENT
        if i < len(self.special_tokens):
            return b""
        return self._piece(i)

    def decode(self, ids: Iterable[int]) -> str:
        """Text of `ids`: PAD, BOS and EOS are dropped, UNK becomes U+FFFD.

        Bytes that are not valid UTF-8 (e.g. half of a Chinese character) decode with
        ``errors="replace"``, so the result is always a str.

        Args:
            ids: token ids (ints or numpy integers).

        Returns:
            The decoded text.

        Raises:
            TypeError: if `ids` is not iterable or holds a non-int.
            ValueError: if an id is outside ``[0, vocab_size)``; nothing is silently dropped.

        Example:
            >>> ByteTokenizer().decode([2, 232, 193, 164, 3, 232])  # last byte alone: U+FFFD
            '你�'
        """
        if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a sequence of ints, got {type(ids).__name__}")
        pieces = [self.token_bytes(self.check_id(x, f"ids[{k}]")) for k, x in enumerate(ids)]
        return b"".join(pieces).decode("utf-8", errors="replace")

    def token_str(self, token_id: int) -> str:
        """Display form of one id: ``"<PAD>"`` for a special, else its bytes escaped.

        Printable ASCII shows as itself; newline, carriage return, tab and backslash as
        ``\\n``, ``\\r``, ``\\t``, ``\\\\``; any other byte as ``\\xNN`` (two hex digits).

        Raises:
            TypeError, ValueError: like `check_id`.
        """
        i = self.check_id(token_id)
        if i < len(self.special_tokens):
            return self.special_tokens[i]
        return "".join(_byte_str(b) for b in self._piece(i))

    def _wrap(self, ids: list[int], add_bos: bool, add_eos: bool) -> list[int]:
        return [self.bos_id] * bool(add_bos) + ids + [self.eos_id] * bool(add_eos)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"


class ByteTokenizer(Tokenizer):
    """The 260-id byte vocabulary: ids 0-3 special, byte b is id b + 4.

    Attributes:
        pad_id, unk_id, bos_id, eos_id: 0, 1, 2, 3.
        vocab_size: 260.

    Example:
        >>> tok = ByteTokenizer()
        >>> tok.encode("A"), tok.decode([69]), tok.is_special(4)
        ([69], 'A', False)
    """

    @property
    def vocab_size(self) -> int:
        """Always 260: 4 specials + 256 byte values."""
        return BYTE_VOCAB_SIZE

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Ids of the UTF-8 bytes of `text`, one id per byte.

        Args:
            text: any str (may be empty).
            add_bos: put BOS (2) first.
            add_eos: put EOS (3) last.

        Returns:
            A new list of ints in ``[0, 260)``.

        Raises:
            TypeError: if `text` is not a str.
            ValueError: if `text` holds a lone surrogate, which has no UTF-8 encoding.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(
                f"text has no UTF-8 encoding: {text[e.start : e.end]!r} at index {e.start} "
                "is a lone surrogate"
            ) from None
        return self._wrap([b + NUM_SPECIAL for b in data], add_bos, add_eos)

    def _piece(self, token_id: int) -> bytes:
        return bytes((token_id - NUM_SPECIAL,))

    def decode(self, ids: Iterable[int]) -> str:
        """`Tokenizer.decode`: the same text, or the same error. A list of plain ints, the
        common case (a decoder's output), is looked up in one pass: 13 times faster, which
        counts where a reply is decoded again after each new token to see if it ended."""
        if type(ids) is list and all(type(x) is int for x in ids):
            try:
                return b"".join([_TEXT_BYTES[x] for x in ids]).decode("utf-8", errors="replace")
            except KeyError:
                pass  # an id out of range: the general path names it
        return Tokenizer.decode(self, ids)  # not super(): no closure, so a check can trap it

    # -- files ------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the vocabulary as JSON: format tag, version, and every id's `token_str`.

        The file is for people and for `load`'s sanity check: the byte vocabulary is
        fixed, so nothing in it can change the mapping.
        """
        doc = {
            "format": _FORMAT,
            "version": _VERSION,
            "type": "byte",
            "vocab_size": self.vocab_size,
            "tokens": [self.token_str(i) for i in range(self.vocab_size)],
        }
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, indent=1)
            f.write("\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ByteTokenizer:
        """Read a file written by `save` and check every field.

        Raises:
            OSError: if the file cannot be read.
            ValueError: if it is not such a file (not UTF-8 JSON, another format, version
                or type, or a token list that differs from the byte vocabulary); the
                message names the file and the field or the first wrong id.
        """
        where = repr(os.fspath(path))
        with open(path, "rb") as f:
            raw = f.read()
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"{where} is not a UTF-8 JSON tokenizer file: {e}") from None
        tok = cls()
        _check_doc(
            doc,
            where,
            {"format": _FORMAT, "version": _VERSION, "type": "byte", "vocab_size": tok.vocab_size},
        )
        tokens = doc.get("tokens")
        if not isinstance(tokens, list) or len(tokens) != tok.vocab_size:
            got = f"{len(tokens)} entries" if isinstance(tokens, list) else repr(tokens)[:40]
            raise ValueError(f"{where}: 'tokens' must list {tok.vocab_size} strings, got {got}")
        for i, s in enumerate(tokens):
            if s != tok.token_str(i):
                raise ValueError(f"{where}: token {i} must be {tok.token_str(i)!r}, got {s!r}")
        return tok


# what each id of the byte vocabulary adds to decoded text, for `ByteTokenizer.decode`
_TEXT_BYTES = {i: ByteTokenizer().token_bytes(i) for i in range(BYTE_VOCAB_SIZE)}


def _check_doc(doc: Any, where: str, want: dict[str, Any]) -> None:
    """Every field of `want` is in the JSON object `doc` with that exact value and type."""
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(doc).__name__}")
    for key, value in want.items():
        got = doc.get(key)
        if type(got) is not type(value) or got != value:
            raise ValueError(f"{where}: field {key!r} must be {value!r}, got {got!r}")
