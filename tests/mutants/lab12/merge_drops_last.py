"""Mutant: the loop runs to len - 1 and forgets the last, unpaired id."""

# zh: 循环只到 len - 1，丢掉了最后那个落单的 id
# fails: merge_basic, merge_overlap, merge_edges, loop_matches_framework

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out: list[int] = []
    i = 0
    while i < len(tokens) - 1:
        if tokens[i] == pair[0] and tokens[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out
