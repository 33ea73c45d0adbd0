"""Mutant: ties go to the pair seen last (>= while scanning the counts)."""

# zh: 并列时取最后看到的那一对（扫描计数时用了 >=）
# fails: count_basic, count_ties, loop_matches_framework

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    best, best_n = None, 2
    for pair, n in counts.items():
        if n >= best_n:
            best, best_n = pair, n
    return (best, best_n) if best is not None else None
