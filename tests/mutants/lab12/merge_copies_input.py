"""Mutant: returns a copy of the input without merging (the C lab's loop check passed it)."""

# zh: 返回输入的副本，根本没有合并（C 版的循环检查放过了它）
# fails: merge_basic, merge_overlap, merge_edges, loop_matches_framework

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    return list(tokens)
