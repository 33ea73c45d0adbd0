"""Mutant: returns a copy of the input without merging (the C lab's loop check passed it)."""

# fails: merge_basic, merge_overlap, merge_edges, loop_matches_framework

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    return list(tokens)
