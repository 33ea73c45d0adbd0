"""Mutant: steps through the tokens two at a time, so pairs at odd positions are never seen."""

# zh: 每次跳两个 id 地扫描，从奇数位置开始的对永远数不到
# fails: count_basic, count_ties, count_overlap, merge_edges, loop_matches_framework

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    for i in range(0, len(tokens) - 1, 2):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    best = max(counts, key=counts.__getitem__)
    return (best, counts[best]) if counts[best] >= 2 else None
