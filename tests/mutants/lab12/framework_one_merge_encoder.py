"""Mutant: builds a one-merge BytePairEncoder whose first new id is new_id, and lets it merge."""

# zh: 造了一个只有一次合并、新 id 从 new_id 开始的 BytePairEncoder 替你合并
# fails: merge_basic, merge_overlap, merge_edges, loop_matches_framework

from __future__ import annotations

from collections.abc import Sequence

from framework.bpe_encode import BytePairEncoder


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    return BytePairEncoder([tuple(pair)], first_id=new_id).merge(list(tokens))
