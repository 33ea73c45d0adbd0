"""Mutant: returns the framework's merge_pair instead of merging."""

# zh: 直接返回框架的 merge_pair，没有自己合并
# fails: merge_basic, merge_overlap, merge_edges, loop_matches_framework

from __future__ import annotations

from collections.abc import Sequence

from framework.bpe_train import merge_pair


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    return merge_pair(tokens, pair, new_id)
