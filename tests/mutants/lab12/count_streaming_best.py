"""Mutant: keeps the best pair while counting, so the first pair to REACH the top count wins."""

# zh: 边数边记最佳对，于是最先“数到”最大次数的那一对赢了
# fails: count_ties, loop_matches_framework

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    best, best_n = None, 0
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
        if counts[pair] > best_n:
            best, best_n = pair, counts[pair]
    return (best, best_n) if best is not None and best_n >= 2 else None
