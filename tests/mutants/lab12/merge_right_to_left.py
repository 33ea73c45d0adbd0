"""Mutant: scans from the right, so "aaa" becomes [a, X] instead of [X, a]."""

# zh: 从右往左扫描，"aaa" 变成 [a, X] 而不是 [X, a]
# fails: merge_overlap, loop_matches_framework

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out: list[int] = []
    i = len(tokens) - 1
    while i >= 0:
        if i >= 1 and tokens[i - 1] == pair[0] and tokens[i] == pair[1]:
            out.append(new_id)
            i -= 2
        else:
            out.append(tokens[i])
            i -= 1
    return out[::-1]
