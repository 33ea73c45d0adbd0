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
insertion) and the C course's `bpe_train`; the incremental update is the textbook speed-up
used by SentencePiece and HF tokenizers: identical chunks are counted once with their
frequency (a chat corpus repeats many messages), an index maps each pair to the positions
where it occurs, and a max-heap with lazy deletion finds the best pair, so the work per
merge is proportional to the pair's occurrences in the distinct chunks, not to the corpus.

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
import itertools
from collections import Counter
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
    """The distinct chunks laid end to end as a linked list, and where each pair occurs.

    Identical chunks are stored once, in order of first appearance, and each position
    weighs as many times as its chunk occurs (`wt`): a pair's count is the sum of the
    weights of its positions. Position i keeps its index while neighbours merge into it,
    so "comes first in the whole sequence" is "has the smallest position" (the first copy
    of a chunk precedes every later one). A pair ``(a, b)`` is keyed by the int
    ``a * span + b`` (faster to hash than a tuple).

    Deletion is lazy: `occ[key]` lists, in ascending order, every position where the pair
    started at some time; it still starts there if `_starts` says so (once gone, a pair
    never comes back at a position: a new adjacency always holds the newest id). `count`
    is exact. A heap entry ``(-count, first, key)`` is never worse than the truth, as
    counts only fall and first positions only move right, except for the pairs a merge
    creates, which get one entry each.
    """

    def __init__(self, words: dict[tuple[int, ...], int], span: int) -> None:
        sizes = [len(w) for w in words]
        tok = np.fromiter(itertools.chain.from_iterable(words), np.int64, sum(sizes))  # (N,)
        wt = np.repeat(np.fromiter(words.values(), np.int64, len(words)), sizes)  # (N,)
        ends = np.cumsum(sizes, dtype=np.int64) - 1  # (W,) last position of each chunk
        nxt, prv = np.arange(1, tok.size + 1), np.arange(-1, tok.size - 1)  # (N,)
        nxt[ends], prv[ends + 1 - np.asarray(sizes, dtype=np.int64)] = -1, -1
        self.span = span
        self.tok, self.nxt, self.prv = tok.tolist(), nxt.tolist(), prv.tolist()
        self.wt: list[int] = wt.tolist()
        self.occ: dict[int, list[int]] = {}
        self.count: dict[int, int] = {}
        left = np.flatnonzero(nxt >= 0)  # (P,) positions that start a pair
        order = left[np.lexsort((tok[left + 1], tok[left]))]  # (P,) by pair, then position
        cut = np.flatnonzero(np.diff(tok[order]) | np.diff(tok[order + 1])) + 1
        pos, starts = order.tolist(), [0, *cut.tolist()] if order.size else []
        counts = np.add.reduceat(wt[order], starts).tolist() if starts else []
        self.heap: list[tuple[int, int, int]] = []
        for s, e, n in zip(starts, [*starts[1:], len(pos)][: len(starts)], counts, strict=True):
            key = self.tok[pos[s]] * span + self.tok[pos[s] + 1]
            self.occ[key], self.count[key] = pos[s:e], n
            if n > 1:
                self.heap.append((-n, pos[s], key))
        heapq.heapify(self.heap)

    def _starts(self, i: int, key: int) -> bool:
        """Whether the pair `key` starts at position i now."""
        a, b = divmod(key, self.span)
        j = self.nxt[i]
        return self.tok[i] == a and j >= 0 and self.tok[j] == b

    def best(self) -> Pair | None:
        """The most frequent pair (ties: smallest first position), or None below 2."""
        heap, count = self.heap, self.count
        while heap:
            neg, first, key = heap[0]
            n = count.get(key, 0)
            if n < 2:
                heapq.heappop(heap)
            elif -neg != n:
                heapq.heapreplace(heap, (-n, first, key))  # first: still a lower bound
            elif self._starts(first, key):
                a, b = divmod(key, self.span)  # a lower bound where it starts: the first
                return a, b
            else:
                found = self.occ[key]
                del found[: next(k for k, i in enumerate(found) if self._starts(i, key))]
                heapq.heapreplace(heap, (neg, found[0], key))
        return None

    def merge(self, pair: Pair, new_id: int) -> None:
        """Replace each occurrence of `pair`, left to right, and update the counts.

        The pairs that lose an occurrence keep their heap entries (now optimistic). The
        new pairs all contain `new_id`: `made` lists their positions (ascending, as the
        scan goes left to right); they are counted and join `occ` at the end.
        """
        a, b = pair
        tok, nxt, prv, wt, count, span = (
            self.tok,
            self.nxt,
            self.prv,
            self.wt,
            self.count,
            self.span,
        )
        key = a * span + b
        made: dict[int, list[int]] = {}
        gone: dict[int, int] = {}  # weight of the made pairs lost again (a b a b, a a a a)
        for i in self.occ.pop(key):
            j = nxt[i]
            if tok[i] != a or j < 0 or tok[j] != b:
                continue  # gone, or consumed by the previous occurrence (a a a)
            w, p, c = wt[i], prv[i], nxt[j]
            tok[i], tok[j], nxt[i] = new_id, -1, c
            if p >= 0:
                if (t := tok[p]) == new_id:  # p merged just before: (new_id, a) is gone
                    gone[t * span + a] = gone.get(t * span + a, 0) + w
                else:
                    count[t * span + a] -= w
                if (found := made.get(new := t * span + new_id)) is None:
                    made[new] = [p]
                else:
                    found.append(p)
            if c >= 0:  # not merged yet: tok[c] != new_id
                prv[c] = i
                count[b * span + tok[c]] -= w
                if (found := made.get(new := new_id * span + tok[c])) is None:
                    made[new] = [i]
                else:
                    found.append(i)
        del count[key]
        for new, found in made.items():
            n = sum(map(wt.__getitem__, found)) - gone.get(new, 0)
            self.occ[new], count[new] = found, n
            if n > 1:
                heapq.heappush(self.heap, (-n, found[0], new))


def _distinct(chunks: Sequence[Sequence[int]]) -> dict[tuple[int, ...], int]:
    """Each distinct non-empty chunk as a tuple of ints, and how often it occurs, in order
    of first appearance; a chunk that is not a flat sequence of non-negative ints is refused."""
    chunks = list(chunks)
    plain = all(type(c) is list or type(c) is tuple for c in chunks)
    if plain and set(map(type, itertools.chain.from_iterable(chunks))) <= {int}:
        words = Counter(map(tuple, chunks))  # all Python ints: only the signs to check
    else:
        words = Counter(_checked(c, k) for k, c in enumerate(chunks))
    if min(map(min, filter(None, words)), default=0) < 0:
        for k, c in enumerate(chunks):
            _checked(c, k)  # raises for the first chunk with a negative id
    return {w: n for w, n in words.items() if w}


def _checked(chunk: Any, k: int) -> tuple[int, ...]:
    """`chunks[k]` checked by `_as_ids`, as a tuple of Python ints."""
    return tuple(_as_ids(chunk, f"chunks[{k}]").tolist())


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
    words = _distinct(chunks)
    top = max(map(max, words), default=-1)
    if first_id <= top:
        raise ValueError(f"first_id must be above every id in chunks ({top}), got {first_id}")
    index = _PairIndex(words, span=int(first_id) + num_merges)
    merges: list[Pair] = []
    while len(merges) < num_merges and (pair := index.best()) is not None:
        index.merge(pair, int(first_id) + len(merges))
        merges.append(pair)
    return merges
