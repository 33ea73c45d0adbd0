"""Mutant: compares (tokens[i], tokens[i + 1]) with (second, first)."""

# zh: 拿 (tokens[i], tokens[i + 1]) 去和 (second, first) 比较
# fails: merge_basic, merge_edges, loop_matches_framework

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out: list[int] = []
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and tokens[i] == pair[1] and tokens[i + 1] == pair[0]:
            out.append(new_id)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out
