"""Mutant: counts pairs without overlap, like str.count ("aaa" holds (a, a) once)."""

# zh: 像 str.count 那样不重叠地数对（"aaa" 里 (a, a) 只算一次）
# fails: count_overlap, loop_matches_framework

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    last: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        if last.get(pair, -2) == i - 1:
            continue  # overlaps the occurrence just counted
        counts[pair] = counts.get(pair, 0) + 1
        last[pair] = i
    if not counts:
        return None
    best = max(counts, key=counts.__getitem__)
    return (best, counts[best]) if counts[best] >= 2 else None
