"""Mutant: replaces every matching position, overlapping ones too ("aaa" → [X, X])."""

# zh: 每个匹配的位置都替换，重叠的也换（"aaa" → [X, X]）
# fails: merge_overlap, loop_matches_framework

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out: list[int] = []
    skip = False
    for i in range(len(tokens)):
        if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == tuple(pair):
            out.append(new_id)
            skip = True
        elif skip:
            skip = False
        else:
            out.append(tokens[i])
    return out
