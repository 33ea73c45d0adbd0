"""Mutant: pads the input with `tokens + [None]`, which only works for a list."""

# zh: 用 tokens + [None] 给输入补尾，只对 list 有效
# fails: merge_edges

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    padded = tokens + [None]  # type: ignore[operator]
    counts: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 1):
        pair = (padded[i], padded[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    best = max(counts, key=counts.__getitem__)
    return (best, counts[best]) if counts[best] >= 2 else None
