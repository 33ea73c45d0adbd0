"""Fingerprints of a token stream: hashes of its k-grams, thinned out by winnowing.

`kgram_hashes` hashes every run of `k` consecutive token kinds (a stable 64-bit BLAKE2b
hash, so a run gives the same fingerprints on every machine and in every process).
`winnow` keeps, in every window of `w` consecutive hashes, the smallest one (the rightmost
of equal ones), as Schleimer, Wilkerson and Aiken's "Winnowing: local algorithms for
document fingerprinting" (SIGMOD 2003) does: whatever two streams share over at least
``w + k - 1`` tokens, they share a fingerprint of, and matches shorter than `k` tokens are
never seen. A hash given as None (a k-gram of the stub, or of a short function) can never
be chosen; a window of nothing but None chooses nothing.

What it does not do: decide what is noise (the caller sets None) or compare documents
(`grader.similarity.rank`). `copydetect` (PyPI) implements the same two steps.

Example:
    >>> winnow([5, 3, 9, 3, 7, 1, 8], 3)
    [1, 3, 5]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = ["kgram_hashes", "winnow"]


def kgram_hashes(kinds: Sequence[str], k: int) -> list[int]:
    """The hash of each k-gram: entry i hashes ``kinds[i:i + k]`` ([] if fewer than k).

    Raises:
        ValueError: if `k` is less than 1.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    out: list[int] = []
    for i in range(len(kinds) - k + 1):
        data = "\x1f".join(kinds[i : i + k]).encode("utf-8", "surrogatepass")
        out.append(int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big"))
    return out


def winnow(hashes: Sequence[int | None], w: int) -> list[int]:
    """The positions winnowing selects, in increasing order (see the module docstring).

    A stream shorter than one window is one window.

    Raises:
        ValueError: if `w` is less than 1.
    """
    if w < 1:
        raise ValueError(f"w must be at least 1, not {w}")
    chosen: list[int] = []
    for lo in range(max(1, len(hashes) - w + 1)):
        best: int | None = None
        best_hash = 0
        for i in range(lo, min(lo + w, len(hashes))):
            h = hashes[i]
            if h is not None and (best is None or h <= best_hash):
                best, best_hash = i, h
        if best is not None and (not chosen or chosen[-1] != best):
            chosen.append(best)
    return chosen
