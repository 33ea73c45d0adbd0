"""Mutant: no guard for an empty count table: max() of nothing raises on 0 or 1 id."""

# zh: 计数表为空时没有保护：0 个或 1 个 id 时 max() 报错
# fails: count_none

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    best = max(counts, key=counts.__getitem__)
    return (best, counts[best]) if counts[best] >= 2 else None
