"""Byte-pair encoding, the training half: count adjacent pairs, merge one, learn a merge list.

BPE starts from a sequence of small ids (here: one id per UTF-8 byte) and repeats one step:
find the most frequent adjacent pair ``(a, b)`` and replace every occurrence of it by a new
id. The list of pairs merged, in order, *is* the trained tokenizer (`BPETokenizer` applies
it to new text). Three functions:

- `count_pairs(ids)`: the most frequent adjacent pair and its count (lab12's
  `bpe_count_pairs` is the same contract);
- `merge_pair(ids, pair, new_id)`: a new list with every occurrence replaced, left to
  right and without overlap (lab12's `bpe_apply_merge`);
- `train_merges(chunks, num_merges, first_id)`: up to `num_merges` merges, with pair
  counts updated incrementally instead of recounted after every merge.

The rules, written down once: overlapping pairs count (``a a a`` holds ``(a, a)`` twice),
but merging is non-overlapping from the left (``a a a`` → ``X a``); ties between equally
frequent pairs go to the pair whose first occurrence comes first in the current sequence;
training stops early when no pair occurs twice. Pairs never span two chunks.

What this module deliberately does not do: no pre-tokenisation (no regex split into
words, unlike GPT-2), so a merge may cross a space; the only boundaries are the chunk
boundaries the caller gives (`BPETokenizer` cuts text at its special chat tags).

Where the idea comes from: karpathy/minbpe (`get_stats`, `merge`, ties by first
insertion) and the C course's `bpe_train`; the incremental update (an index from each pair
to the positions where it occurs, and a lazy max-heap) is the textbook speed-up used by
SentencePiece and HF tokenizers, so the work per merge is proportional to the pair's
occurrences, not to the corpus.

Example:
    >>> count_pairs([1, 2, 3, 1, 2])
    ((1, 2), 2)
    >>> merge_pair([1, 2, 3, 1, 2], (1, 2), 4)
    [4, 3, 4]
    >>> train_merges([[1, 2, 3, 1, 2, 3]], 10, first_id=4)  # (1,2) → 4, then (4,3) → 5
    [(1, 2), (4, 3)]
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["count_pairs", "merge_pair", "train_merges"]

Pair = tuple[int, int]


def _as_ids(ids: Any, name: str = "ids") -> NDArray[np.int64]:
    """`ids` as a 1-D int64 array; floats, bools, strings and negative ids are refused."""
    if isinstance(ids, str | bytes) or not isinstance(ids, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a sequence of ints, got {type(ids).__name__}")
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        kind = f"dtype {arr.dtype}" if arr.ndim == 1 else f"shape {arr.shape}"
        raise TypeError(f"{name} must be a flat sequence of ints, got {kind}")
    if int(arr.min()) < 0:
        raise ValueError(f"{name} must hold non-negative ids, got {int(arr.min())}")
    return arr.astype(np.int64, copy=False)


def _as_pair(pair: Any) -> Pair:
    """`pair` as two ints, or a TypeError that quotes it."""
    if not isinstance(pair, Sequence) or len(pair) != 2:
        raise TypeError(f"pair must be a (first, second) tuple of ints, got {pair!r}")
    a, b = pair
    for v in (a, b):
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise TypeError(f"pair must hold two ints, got {pair!r}")
    return int(a), int(b)


def count_pairs(ids: Sequence[int]) -> tuple[Pair, int] | None:
    """The most frequent adjacent pair of `ids` and how often it occurs.

    Args:
        ids: token ids (a list, tuple or 1-D integer array), not modified.

    Returns:
        ``((a, b), count)``; ties go to the pair whose first occurrence comes first.
        ``None`` when `ids` has fewer than 2 ids or no pair occurs twice.

    Raises:
        TypeError: if `ids` is not a flat sequence of ints.
        ValueError: if an id is negative.

    Example:
        >>> count_pairs([5, 5, 5]), count_pairs([1, 2, 3])
        (((5, 5), 2), None)
    """
    a = _as_ids(ids)
    if a.size < 2:
        return None
    codes = a[:-1] * (int(a.max()) + 1) + a[1:]  # (N-1,) one code per adjacent pair
    _, first, counts = np.unique(codes, return_index=True, return_counts=True)
    best = int(counts.max())
    if best < 2:
        return None
    k = int(first[counts == best].min())  # earliest first occurrence among the tied
    return (int(a[k]), int(a[k + 1])), best


def _non_overlapping(hit: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Of each run of consecutive hits, keep the 1st, 3rd, 5th, ... (a left-to-right scan)."""
    idx = np.arange(hit.size)  # (N-1,)
    starts = hit & ~np.concatenate(([False], hit[:-1]))  # (N-1,) first hit of each run
    run_start = np.maximum.accumulate(np.where(starts, idx, 0))  # (N-1,)
    keep: NDArray[np.bool_] = hit & ((idx - run_start) % 2 == 0)
    return keep


def merge_pair(ids: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """A new list in which each occurrence of `pair` becomes `new_id`.

    The scan goes left to right and a merged id is never reused, so ``[a, a, a]`` with
    ``pair = (a, a)`` becomes ``[new_id, a]``. `ids` is not modified.

    Args:
        ids: token ids (a list, tuple or 1-D integer array).
        pair: the ``(first, second)`` pair to replace.
        new_id: the id that replaces it (any non-negative int).

    Returns:
        A new list of ints, at most ``len(ids)`` long.

    Raises:
        TypeError: if `ids`, `pair` or `new_id` is not made of ints.
        ValueError: if an id or `new_id` is negative.

    Example:
        >>> merge_pair([7, 7, 7, 7, 7], (7, 7), 9)
        [9, 9, 7]
    """
    a = _as_ids(ids)
    first, second = _as_pair(pair)
    (new,) = _as_ids([new_id], "new_id")
    if a.size < 2:
        return [int(x) for x in a]
    hit = (a[:-1] == first) & (a[1:] == second)  # (N-1,) pair starts at i
    if first == second:
        hit = _non_overlapping(hit)
    at = np.flatnonzero(hit)
    out = a.copy()
    out[at] = new
    keep = np.ones(a.size, dtype=bool)
    keep[at + 1] = False
    return [int(x) for x in out[keep]]  # (N - len(at),)


class _PairIndex:
    """The sequence as a linked list over original positions, and where each pair occurs.

    Position i keeps its index while neighbours merge into it, so "comes first in the
    current sequence" is "has the smallest position". `first[p]` is a lower bound of the
    first position of pair p (exact unless p is in `stale`); heap entries
    ``(-count, first, pair)`` are never worse than the truth and are fixed when popped.
    """

    def __init__(self, chunks: Sequence[Sequence[int]]) -> None:
        parts = [_as_ids(c, f"chunks[{i}]") for i, c in enumerate(chunks)]
        tok = np.concatenate([np.zeros(0, np.int64), *parts])  # (N,)
        ends = np.cumsum([0] + [p.size for p in parts])[1:] - 1  # last position of each chunk
        nxt = np.arange(1, tok.size + 1)  # (N,)
        nxt[ends[ends >= 0]] = -1
        prv = np.full(tok.size, -1)  # (N,)
        prv[nxt[nxt >= 0]] = np.flatnonzero(nxt >= 0)
        self.tok, self.nxt, self.prv = tok.tolist(), nxt.tolist(), prv.tolist()
        self.occ: dict[Pair, set[int]] = {}
        self.first: dict[Pair, int] = {}
        self.stale: set[Pair] = set()
        left = np.flatnonzero(nxt >= 0)  # (P,) positions that start a pair
        codes = tok[left] * (int(tok.max(initial=0)) + 1) + tok[nxt[left]]  # (P,)
        order = np.argsort(codes, kind="stable")  # (P,) grouped by pair, positions ascending
        bounds = np.flatnonzero(np.diff(codes[order])) + 1
        for group in np.split(left[order], bounds) if left.size else ():
            pos = group.tolist()
            pair = (self.tok[pos[0]], self.tok[self.nxt[pos[0]]])
            self.occ[pair], self.first[pair] = set(pos), pos[0]
        self.heap = [(-len(s), self.first[p], p) for p, s in self.occ.items() if len(s) > 1]
        heapq.heapify(self.heap)

    def best(self) -> Pair | None:
        """The most frequent pair (ties: smallest first position), or None below 2."""
        while self.heap:
            neg, first, pair = self.heap[0]
            found = self.occ.get(pair, ())
            if len(found) < 2:
                heapq.heappop(self.heap)
                continue
            if pair in self.stale:
                self.first[pair] = min(found)
                self.stale.discard(pair)
            if -neg == len(found) and first == self.first[pair]:
                return pair
            heapq.heapreplace(self.heap, (-len(found), self.first[pair], pair))
        return None

    def merge(self, pair: Pair, new_id: int) -> None:
        """Replace each occurrence of `pair`, left to right, and update the counts.

        Pairs that lose an occurrence keep their heap entries (now optimistic); the new
        pairs, which all contain `new_id`, get one exact entry each at the end. A pair
        never gains occurrences after the step that creates it, so this is all.
        """
        a, b = pair
        tok, nxt, prv, occ, stale = self.tok, self.nxt, self.prv, self.occ, self.stale
        made: set[Pair] = set()
        for i in sorted(occ.pop(pair)):
            j = nxt[i]
            if tok[i] != a or j < 0 or tok[j] != b:
                continue  # consumed by the previous occurrence (a run like a a a)
            p, c = prv[i], nxt[j]
            tok[i], tok[j], nxt[i] = new_id, -1, c
            if p >= 0:
                old = (tok[p], a)
                occ.get(old, set()).discard(p)
                stale.add(old)  # its first position may have moved right
                occ.setdefault(new := (tok[p], new_id), set()).add(p)
                made.add(new)
            if c >= 0:
                prv[c] = i
                old = (b, tok[c])
                occ.get(old, set()).discard(j)
                stale.add(old)
                occ.setdefault(new := (new_id, tok[c]), set()).add(i)
                made.add(new)
        for new in made:
            if len(found := occ[new]) > 1:
                self.first[new] = min(found)
                stale.discard(new)
                heapq.heappush(self.heap, (-len(found), self.first[new], new))

    def sequence(self) -> list[int]:
        """The current ids of all chunks, concatenated."""
        return [t for t in self.tok if t >= 0]


def train_merges(chunks: Sequence[Sequence[int]], num_merges: int, first_id: int) -> list[Pair]:
    """Learn up to `num_merges` merges; merge k creates id ``first_id + k``.

    Each step takes `count_pairs` of the current sequence (over all chunks, never across
    two) and applies `merge_pair`; the result is the same as that naive loop, only faster.

    Args:
        chunks: id sequences (e.g. the UTF-8 byte ids of each piece of text), not modified.
        num_merges: how many merges to learn at most (0 is allowed).
        first_id: the id of the first new token; must exceed every id in `chunks`.

    Returns:
        The merged pairs in order; shorter than `num_merges` when no pair occurs twice.

    Raises:
        TypeError: if an argument is not made of ints.
        ValueError: if `num_merges` is negative or `first_id` is not above every id.

    Example:
        >>> train_merges([[0, 1, 0, 1], [0, 1]], 5, first_id=2)
        [(0, 1)]
    """
    for name, v in (("num_merges", num_merges), ("first_id", first_id)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise TypeError(f"{name} must be an int, got {type(v).__name__} {v!r}")
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    index = _PairIndex(chunks)
    top = max(index.tok, default=-1)
    if first_id <= top:
        raise ValueError(f"first_id must be above every id in chunks ({top}), got {first_id}")
    merges: list[Pair] = []
    while len(merges) < num_merges and (pair := index.best()) is not None:
        index.merge(pair, int(first_id) + len(merges))
        merges.append(pair)
    return merges
