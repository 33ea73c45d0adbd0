"""Mutant: returns the best pair even when it occurs only once (no threshold of 2)."""

# zh: 最多的一对只出现一次也照样返回（没有“至少 2 次”的门槛）
# fails: count_none, loop_matches_framework

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    best = max(counts, key=counts.__getitem__)
    return best, counts[best]
