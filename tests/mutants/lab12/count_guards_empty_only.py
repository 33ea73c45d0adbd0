"""Mutant: returns None for an empty list, but a single id still reaches max() of nothing."""

# zh: 只对空列表返回 None，只有一个 id 时仍去求空集合的 max()
# fails: count_none

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    if not tokens:
        return None
    counts: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    best = max(counts, key=counts.__getitem__)
    return (best, counts[best]) if counts[best] >= 2 else None
