"""Mutant: merges in the caller's list (del / assign) and returns it."""

# zh: 在调用者的列表里就地合并（del / 赋值）并把它返回
# fails: merge_basic, merge_overlap, merge_edges, loop_matches_framework

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out = tokens  # not a copy
    i = 0
    while i < len(out) - 1:
        if out[i] == pair[0] and out[i + 1] == pair[1]:
            out[i] = new_id  # type: ignore[index]
            del out[i + 1]  # type: ignore[attr-defined]
        i += 1
    return out  # type: ignore[return-value]
