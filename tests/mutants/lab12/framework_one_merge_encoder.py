"""Mutant: builds a one-merge BytePairEncoder whose first new id is new_id, and lets it merge."""

# fails: merge_basic, merge_overlap, merge_edges, loop_matches_framework

from __future__ import annotations

from collections.abc import Sequence

from framework.bpe_encode import BytePairEncoder


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    return BytePairEncoder([tuple(pair)], first_id=new_id).merge(list(tokens))
