"""Mutant: starts from tokens.copy() and deletes in it: fine for a list, not for a tuple."""

# zh: 从 tokens.copy() 开始在里面删：对 list 可以，对元组不行
# fails: merge_edges

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out = tokens.copy()  # type: ignore[attr-defined]
    i = 0
    while i < len(out) - 1:
        if out[i] == pair[0] and out[i + 1] == pair[1]:
            out[i] = new_id
            del out[i + 1]
        i += 1
    return out  # type: ignore[no-any-return]
