"""Mutant: appends a sentinel to the caller's list to avoid a bounds check, and leaves it there."""

# zh: 为省掉边界检查往调用者的列表末尾加了哨兵，而且没有拿掉
# fails: count_basic, count_none, count_ties, count_overlap, merge_edges, loop_matches_framework

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    tokens.append(-1)  # type: ignore[attr-defined]
    counts: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 1):
        if tokens[i + 1] == -1:
            break
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    best = max(counts, key=counts.__getitem__)
    return (best, counts[best]) if counts[best] >= 2 else None
