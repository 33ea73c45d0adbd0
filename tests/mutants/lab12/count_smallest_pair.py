"""Mutant: breaks ties by the smaller pair (sorted counts), not by first appearance."""

# zh: 并列时取数值更小的一对（对计数排了序），而不是最先出现的
# fails: count_basic, count_ties, loop_matches_framework

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    best = max(sorted(counts), key=counts.__getitem__)
    return (best, counts[best]) if counts[best] >= 2 else None
