"""BPE encoding with the student's `bpe_apply_merge` (lab12) doing the merging.

A trained BPE vocabulary is its merge list. Encoding a text means: cut it at the chat
tags (each tag is its special id), turn each piece into byte ids (byte + 4), then replay
the merges in rank order, each one left to right and without overlap: exactly lab12's
`bpe_apply_merge`. `MineTokenizer` does that, skipping the merges whose pair does not
occur (replaying those would change nothing), and gives the same ids as the framework's
`BPETokenizer.encode`, which finds them faster with a heap.

Decoding, the special ids and the vocabulary file stay the framework's.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from framework.bpe_tokenizer import BPETokenizer
from framework.bpe_vocab import FIRST_MERGE_ID, TAG_IDS
from framework.chat import CHAT_TAGS
from framework.tokenizer import NUM_SPECIAL
from grader.mine.pieces import PieceError

__all__ = ["MineTokenizer", "replay_merges"]

_SPLIT = re.compile("(" + "|".join(re.escape(t) for t in CHAT_TAGS) + ")")


def replay_merges(
    apply_merge: Callable[..., Any], merges: list[tuple[int, int]], data: bytes
) -> list[int]:
    """The ids of `data`: byte ids, then every merge in rank order through `apply_merge`.

    Raises:
        PieceError: if `apply_merge` returns something that is not a list of ids.
    """
    ids = [b + NUM_SPECIAL for b in data]
    present = set(itertools.pairwise(ids))
    for rank, pair in enumerate(merges):
        if pair not in present:
            continue
        out = apply_merge(list(ids), pair, FIRST_MERGE_ID + rank)
        if not isinstance(out, list) or not all(isinstance(i, int) for i in out):
            why = f"returned {type(out).__name__}, expected a list of ints"
            raise PieceError("bpe", "bpe_apply_merge", why)
        if len(out) >= len(ids):
            why = f"merged {pair} (present in {ids[:12]}...) but returned as many ids or more"
            raise PieceError("bpe", "bpe_apply_merge", why)
        ids = out
        present = set(itertools.pairwise(ids))
    return ids


class MineTokenizer(BPETokenizer):
    """`base`'s vocabulary, encoding through the student's `bpe_apply_merge`.

    Example:
        >>> from framework.bpe_train import merge_pair
        >>> base = BPETokenizer.train("ab ab ab", 2)
        >>> MineTokenizer(base, merge_pair).encode("<|user|>ab") == base.encode("<|user|>ab")
        True
    """

    def __init__(self, base: BPETokenizer, apply_merge: Callable[..., Any]) -> None:
        super().__init__(base.merges)
        self.apply_merge = apply_merge
        self._merge_list = base.merges

    def _ids(self, text: str) -> list[int]:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"text has no UTF-8 encoding at index {e.start}") from None
        return replay_merges(self.apply_merge, self._merge_list, data)

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Like `BPETokenizer.encode`; the merging is the student's."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        ids: list[int] = [self.bos_id] if add_bos else []
        for piece in _SPLIT.split(text):
            if piece:
                ids += [TAG_IDS[piece]] if piece in TAG_IDS else self._ids(piece)
        return [*ids, self.eos_id] if add_eos else ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Like `BPETokenizer.encode_ordinary` (a tag stays text); the merging is the student's."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self._ids(text)
