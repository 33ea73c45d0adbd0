"""Lab12 with one bug: the pair that first REACHES the top count wins a tie."""

from __future__ import annotations

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    """The most frequent adjacent pair and its count; ties to the pair seen first."""
    counts: dict[tuple[int, int], int] = {}
    best, best_n = None, 0
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
        if counts[pair] > best_n:  # the running leader: not the pair seen first
            best, best_n = pair, counts[pair]
    return (best, best_n) if best is not None and best_n >= 2 else None


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """A new list with each left-to-right, non-overlapping `pair` replaced by `new_id`."""
    out: list[int] = []
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and tokens[i] == pair[0] and tokens[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out
