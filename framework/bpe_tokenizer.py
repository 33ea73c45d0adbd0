"""Byte-level BPE tokenizer: UTF-8 bytes, learned merges, and the chat tags as single ids.

The vocabulary, in id order:

- 0-3: PAD, UNK, BOS, EOS (as in `ByteTokenizer`);
- 4-259: the 256 byte values, ``id = byte + 4``, so no text is ever unknown and any
  Unicode text (Chinese included) round-trips;
- 260-263: the chat tags ``<|system|>``, ``<|user|>``, ``<|assistant|>``, ``<|end|>``;
- 264 + k: merge k, the concatenation of the two ids it joins.

`train` learns the merges from text (`framework.bpe_train`: the most frequent pair, ties
to the pair seen first). `encode` cuts the text at the chat tags (each becomes its id; no
merge crosses a tag), turns each piece into byte ids and applies the merges in rank
order (`framework.bpe_encode`), which gives exactly what replaying the training merges
one by one would give.
`decode` joins the bytes of the ids and drops the specials. The vocabulary file
(`framework.bpe_vocab`) is JSON, one merge per line with its text, versioned, and checked
on `load`; `fingerprint()` is a hash of the content that a model checkpoint records, so a
model is never paired with a vocabulary it was not trained with.

What this module deliberately does not do: no pre-tokenisation regex (merges may cross
spaces, as in the C course and minbpe's BasicTokenizer), no normalisation, no dropout.

Where the idea comes from: karpathy/minbpe (`base.py`, `basic.py`: the 256 byte tokens,
`merges` in rank order, `encode` by lowest rank first) and GPT-2's byte-level BPE; the C
course's `bpe_tokenizer.c` with its 101-character base (all Chinese text became UNK)
replaced by the 256 bytes, and its silent vocabulary loading replaced by checks.

Example:
    >>> tok = BPETokenizer.train("你好, hello! 你好, world!", num_merges=2)
    >>> tok.merges  # bytes e4+bd, then (e4 bd)+a0: the three UTF-8 bytes of 你
    [(232, 193), (264, 164)]
    >>> ids = tok.encode("<|user|>你 hi", add_bos=True)
    >>> ids, tok.pieces(ids)
    ([2, 261, 265, 36, 108, 109], ['<BOS>', '<|user|>', '你', ' ', 'h', 'i'])
    >>> tok.decode(ids), tok.decode(ids, keep_tags=True)
    ('你 hi', '<|user|>你 hi')
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from framework import bpe_vocab
from framework.bpe_encode import BytePairEncoder
from framework.bpe_train import train_merges
from framework.bpe_vocab import FIRST_MERGE_ID, SPECIAL_IDS, TAG_BASE, TAG_IDS
from framework.chat import CHAT_TAGS
from framework.tokenizer import NUM_SPECIAL, REPLACEMENT, SPECIAL_TOKENS, Tokenizer

__all__ = ["FIRST_MERGE_ID", "TAG_IDS", "BPETokenizer"]

_SPLIT = re.compile("(" + "|".join(re.escape(t) for t in CHAT_TAGS) + ")")
_TAGS = frozenset(TAG_IDS.values())


class BPETokenizer(Tokenizer):
    """Byte-level BPE with the four chat tags as special ids.

    Attributes:
        pad_id, unk_id, bos_id, eos_id: 0, 1, 2, 3 (UNK never occurs: bytes cover all text).
        merges: the learned pairs in rank order; merge k makes id ``264 + k``.
        vocab_size: ``264 + len(merges)``.

    Example:
        >>> tok = BPETokenizer([(76, 109)])  # 'H' + 'i' → 264
        >>> tok.encode("Hi!", add_eos=True), tok.token_id("<|end|>")
        ([264, 37, 3], 263)
    """

    def __init__(self, merges: Iterable[tuple[int, int]] = ()) -> None:
        """Build from a merge list (usually from `train` or `load`).

        Raises:
            TypeError: if a merge is not a pair of ints.
            ValueError: if a merge uses a special id or an id not defined before it.
        """
        self._merges = bpe_vocab.check_merges(merges)
        self._bytes = bpe_vocab.id_bytes(self._merges)
        self._encoder = BytePairEncoder(self._merges, FIRST_MERGE_ID)
        self._tagged = [b"", REPLACEMENT, b"", b"", *self._bytes[NUM_SPECIAL:]]  # decoded
        self._text = [b"" if i in _TAGS else b for i, b in enumerate(self._tagged)]

    @classmethod
    def train(cls, text: str, num_merges: int) -> BPETokenizer:
        """Learn up to `num_merges` merges from `text` (the chat tags in it are not merged).

        Args:
            text: the training text.
            num_merges: at most this many merges (fewer if no pair occurs twice).

        Returns:
            A new tokenizer with ``264 + len(merges)`` ids.

        Raises:
            TypeError: if `text` is not a str or `num_merges` not an int.
            ValueError: if `num_merges` is negative or `text` has a lone surrogate.

        Example:
            >>> BPETokenizer.train("a" * 8, 10).merges  # (a, a), (aa, aa), then none twice
            [(101, 101), (264, 264)]
        """
        chunks = [[b + NUM_SPECIAL for b in _utf8(p)] for p in _pieces(text) if p not in TAG_IDS]
        return cls(train_merges(chunks, num_merges, FIRST_MERGE_ID))

    @property
    def vocab_size(self) -> int:
        """264 + the number of merges."""
        return len(self._bytes)

    @property
    def merges(self) -> list[tuple[int, int]]:
        """A copy of the merge list, in rank order."""
        return list(self._merges)

    # -- encode / decode ------------------------------------------------------------------
    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Ids of `text`; each chat tag in it becomes its special id.

        Args:
            text: any str.
            add_bos: put BOS (2) first.
            add_eos: put EOS (3) last.

        Returns:
            A new list of ids; `decode` gives `text` back without its chat tags.

        Raises:
            TypeError: if `text` is not a str.
            ValueError: if `text` holds a lone surrogate (it has no UTF-8 encoding).
        """
        ids: list[int] = []
        for piece in _pieces(text):
            ids += [TAG_IDS[piece]] if piece in TAG_IDS else self._encoder.encode(_utf8(piece))
        return self._wrap(ids, add_bos, add_eos)

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of `text` as plain text: a chat tag in it is encoded as its characters.

        Raises:
            TypeError, ValueError: like `encode`.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self._encoder.encode(_utf8(text))

    def decode(self, ids: Iterable[int], keep_tags: bool = False) -> str:
        """Text of `ids`: PAD, BOS, EOS and (unless `keep_tags`) the chat tags dropped.

        Args:
            ids: token ids.
            keep_tags: write each chat tag as its text, so that
                ``decode(encode(s), keep_tags=True) == s``.

        Raises:
            TypeError, ValueError: like `Tokenizer.decode` (a bad id is never skipped).

        Example:
            >>> BPETokenizer().decode([2, 261, 108, 109, 263], keep_tags=True)
            '<|user|>hi<|end|>'
        """
        if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a sequence of ints, got {type(ids).__name__}")
        ids = list(ids)
        fast = all(type(x) is int for x in ids) and all(0 <= x < len(self._bytes) for x in ids)
        if not fast:  # numpy ints, or an error to report with its position
            ids = [self.check_id(x, f"ids[{k}]") for k, x in enumerate(ids)]
        table = self._tagged if keep_tags else self._text
        return b"".join([table[i] for i in ids]).decode("utf-8", errors="replace")

    def is_special(self, token_id: int) -> bool:
        """True for PAD, UNK, BOS, EOS and the four chat tags. Raises like `check_id`."""
        i = self.check_id(token_id)
        return i < NUM_SPECIAL or i in _TAGS

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of an id in decoded text (``b""`` for a chat tag). Raises like `check_id`."""
        i = self.check_id(token_id)
        return b"" if i in _TAGS else super().token_bytes(i)

    def _piece(self, token_id: int) -> bytes:
        return self._bytes[token_id]

    def token_str(self, token_id: int) -> str:
        """Display form: a special's name, else the token's text with bytes that are not
        UTF-8, control characters and backslash escaped (``\\n``, ``\\xe4``, ``\\\\``)."""
        i = self.check_id(token_id)
        if i < NUM_SPECIAL:
            return SPECIAL_TOKENS[i]
        return CHAT_TAGS[i - TAG_BASE] if i in _TAGS else bpe_vocab.show(self._bytes[i])

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """`token_str` of each id: shows how a text was cut."""
        return [self.token_str(i) for i in ids]

    def token_id(self, name: str) -> int:
        """The id of a special token by name: ``"<BOS>"``, ``"<|end|>"``, ...

        Raises:
            ValueError: for any other name (the message lists the names).
        """
        if name not in SPECIAL_IDS:
            raise ValueError(f"unknown special token {name!r}; known: {', '.join(SPECIAL_IDS)}")
        return SPECIAL_IDS[name]

    def known_ids(self) -> list[int]:
        """Every id `encode` can produce: all but PAD and UNK (a model samples only these)."""
        return [self.bos_id, self.eos_id, *range(NUM_SPECIAL, self.vocab_size)]

    # -- files ----------------------------------------------------------------------------
    def fingerprint(self) -> str:
        """``"sha256:<hex>"`` of the vocabulary's content: equal vocabularies, equal hash.

        A model checkpoint records it; `load` can then refuse another vocabulary.
        """
        return bpe_vocab.fingerprint(self._merges)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the vocabulary file (JSON, one ``[id, first, second, "text"]`` per merge)."""
        bpe_vocab.write_vocab(path, self._merges)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], expected_fingerprint: str | None = None
    ) -> BPETokenizer:
        """Read a file written by `save`, checking every field.

        Args:
            path: the vocabulary file.
            expected_fingerprint: if given (e.g. from a model checkpoint), the file's
                content must have this fingerprint.

        Raises:
            OSError: if the file cannot be read.
            ValueError: if it is malformed, of another format or a newer version,
                inconsistent (a merge's text, the vocab size or the fingerprint), or not
                the expected vocabulary; the message names the file and the field.
        """
        return cls(bpe_vocab.read_vocab(path, expected_fingerprint))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BPETokenizer) and self._merges == other._merges

    def __hash__(self) -> int:
        return hash(tuple(self._merges))

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size}, merges={len(self._merges)})"


def _pieces(text: str) -> list[str]:
    """`text` cut at the chat tags, the tags kept as pieces of their own, no empty piece."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return [p for p in _SPLIT.split(text) if p]


def _utf8(text: str) -> bytes:
    """`text` as UTF-8, or a ValueError that points at a lone surrogate."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"text has no UTF-8 encoding: {text[e.start : e.end]!r} at index {e.start} "
            "is a lone surrogate"
        ) from None
