"""Byte-pair encoding, the encoding half: apply a merge list to new bytes, fast and exactly.

The rule is simple: start from one id per byte (byte + 4) and apply the merges in rank
order, each left to right without overlap, as training did. `BytePairEncoder` does the
same work two ways faster than replaying the merges one by one:

- a heap of (rank, position) over a linked list merges the lowest-ranked pair present
  until none is left: O(n log n) per piece instead of one pass per merge (a rank is never
  undercut later, since a pair that contains a new id ranks after it);
- safe cuts: if the two bytes x y never meet *inside* any merged token (no merge joins a
  token ending in x to one starting with y), no token can span the boundary between
  them, so the bytes can be cut there and each piece encoded alone. Pieces repeat in real
  text, so each one's ids are cached, and so are those of each whole short input (a chat
  message between two tags often recurs verbatim): a repeat costs one dict look-up.

What this module deliberately does not do: no text handling (UTF-8, chat tags: that is
`BPETokenizer`), no training (`framework.bpe_train`).

Where the idea comes from: minbpe's `encode` (lowest rank first), tiktoken's
`byte_pair_merge` and its per-piece cache; the cut rule replaces a regex pre-tokeniser
with one derived from the merges themselves, so the result equals the uncut encoding.

Example:
    >>> enc = BytePairEncoder([(101, 102)], first_id=264)  # 'a' + 'b' -> 264
    >>> enc.encode(b"abab c")
    [264, 264, 36, 103]
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence

import numpy as np

__all__ = ["BytePairEncoder"]

_OFFSET = 4  # byte b is id b + 4
_CACHE_LIMIT = 1 << 16  # pieces kept; the cache is emptied when it is full
_WHOLE = 1024  # an input up to this many bytes is cached whole too (a chat message)
_SHORT = 256  # below this many bytes the cuts are found in Python, above with numpy


class BytePairEncoder:
    """Applies one merge list (pairs of ids in rank order; merge k makes `first_id + k`)."""

    def __init__(self, merges: Sequence[tuple[int, int]], first_id: int) -> None:
        self.first_id = first_id
        self.ranks = {pair: k for k, pair in enumerate(merges)}
        ends: list[tuple[int, int]] = [(b - _OFFSET, b - _OFFSET) for b in range(_OFFSET, 260)]
        ends = [(-1, -1)] * _OFFSET + ends  # (first byte, last byte) of each id below first_id
        ends += [(-1, -1)] * (first_id - len(ends))
        self.joins = np.zeros(256 * 256, dtype=bool)  # byte pairs found inside some token
        for a, b in merges:
            self.joins[ends[a][1] * 256 + ends[b][0]] = True
            ends.append((ends[a][0], ends[b][1]))
        self._joins = self.joins.tobytes()  # the same table, faster to index from Python
        self.cache: dict[bytes, list[int]] = {}  # a piece, or a whole short input: its ids

    def encode(self, data: bytes) -> list[int]:
        """The ids of `data`: byte + 4, merged by rank. Equal to replaying every merge."""
        if (ids := self.cache.get(data)) is not None:
            return ids[:]
        if len(data) < 2 or not self.ranks:
            return [b + _OFFSET for b in data]
        if len(data) < _SHORT:
            joins = self._joins
            cuts = [k for k in range(1, len(data)) if not joins[data[k - 1] << 8 | data[k]]]
        else:
            arr = np.frombuffer(data, dtype=np.uint8).astype(np.int64)  # (n,)
            cuts = (np.flatnonzero(~self.joins[arr[:-1] * 256 + arr[1:]]) + 1).tolist()
        out: list[int] = []
        cache = self.cache
        for start, end in itertools.pairwise([0, *cuts, len(data)]):
            piece = data[start:end]
            if (ids := cache.get(piece)) is None:
                ids = self._remember(piece, self.merge([b + _OFFSET for b in piece]))
            out += ids
        if len(data) <= _WHOLE and cuts:
            self._remember(data, out[:])
        return out

    def _remember(self, data: bytes, ids: list[int]) -> list[int]:
        """Cache `ids` as the encoding of `data` (emptying a full cache first)."""
        if len(self.cache) >= _CACHE_LIMIT:
            self.cache.clear()
        self.cache[data] = ids
        return ids

    def merge(self, ids: list[int]) -> list[int]:
        """Merge the lowest-ranked pair present, left to right, until none is a merge."""
        n, ranks = len(ids), self.ranks
        nxt, prv = [*range(1, n), -1], list(range(-1, n - 1))
        pairs = enumerate(itertools.pairwise(ids))
        heap = [(r, i) for i, p in pairs if (r := ranks.get(p)) is not None]
        heapq.heapify(heap)
        while heap:
            r, i = heapq.heappop(heap)
            j = nxt[i]
            if j < 0 or ranks.get((ids[i], ids[j])) != r:
                continue  # an entry made stale by an earlier merge
            ids[i], ids[j], c = self.first_id + r, -1, nxt[j]
            nxt[i] = c
            if c >= 0:
                prv[c] = i
                if (rc := ranks.get((ids[i], ids[c]))) is not None:
                    heapq.heappush(heap, (rc, i))
            if (p := prv[i]) >= 0 and (rp := ranks.get((ids[p], ids[i]))) is not None:
                heapq.heappush(heap, (rp, p))
        return [t for t in ids if t >= 0]
