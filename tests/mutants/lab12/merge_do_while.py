"""Mutant: a do-while loop translated from C reads tokens[0] before checking the length."""

# zh: 从 C 翻译来的 do-while 循环在检查长度之前就读了 tokens[0]
# fails: merge_edges

from collections.abc import Sequence


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out: list[int] = []
    i = 0
    while True:
        a = tokens[i]
        if i + 1 < len(tokens) and a == pair[0] and tokens[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(a)
            i += 1
        if i >= len(tokens):
            break
    return out
