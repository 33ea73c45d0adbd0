"""Mutant: the loop stops one pair early (range(len(tokens) - 2))."""

# zh: 循环少数了最后一对（range(len(tokens) - 2)）
# fails: count_basic, count_ties, count_overlap, merge_edges, loop_matches_framework

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 2):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    best = max(counts, key=counts.__getitem__)
    return (best, counts[best]) if counts[best] >= 2 else None
