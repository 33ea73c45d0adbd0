"""Mutant: returns the framework's count_pairs instead of counting."""

# zh: 直接返回框架的 count_pairs，没有自己数
# fails: count_basic, count_none, count_ties, count_overlap, merge_edges, loop_matches_framework

from __future__ import annotations

from collections.abc import Sequence

from framework.bpe_train import count_pairs


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    return count_pairs(tokens)
