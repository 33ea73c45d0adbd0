"""Mutant: counts in a 256 × 256 table, as if ids were bytes (merged ids are 264 and up)."""

# zh: 在 256 × 256 的表里计数，把 id 当成字节（合并出来的 id 从 264 起）
# fails: loop_matches_framework

from collections.abc import Sequence

import numpy as np


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    table = np.zeros((260, 260), dtype=np.int64)
    first = np.full((260, 260), len(tokens), dtype=np.int64)
    for i in range(len(tokens) - 1):
        a, b = tokens[i], tokens[i + 1]
        table[a, b] += 1
        first[a, b] = min(first[a, b], i)
    n = int(table.max()) if len(tokens) > 1 else 0
    if n < 2:
        return None
    k = int(np.where(table == n, first, len(tokens)).argmin())
    return (k // 260, k % 260), n
