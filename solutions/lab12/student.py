"""Lab12 — BPE: the two operations that grow a tokenizer's vocabulary.

Byte-pair encoding starts from the UTF-8 bytes of a text, one id per byte (byte + 4, as in
Lab02), and repeats one step as often as you like:

    pair, count = the most frequent adjacent pair         -> bpe_count_pairs
    ids = ids with every (a, b) replaced by one new id    -> bpe_apply_merge

Each step adds one id to the vocabulary and makes the sequence shorter. The list of pairs
merged, in order, is the trained tokenizer: `framework.bpe_tokenizer.BPETokenizer` replays
it on new text. Run `make test` in this folder after every change; `TASK.md` explains
each function.

Plain Python is enough (a dict for counting, a list for the output); numpy is allowed.
The framework's own versions (`framework.bpe_train.count_pairs`, `merge_pair`,
`train_merges`, and `BPETokenizer`) are off limits here: the point is to write them.
"""

from __future__ import annotations

from collections.abc import Sequence


def bpe_count_pairs(tokens: Sequence[int]) -> tuple[tuple[int, int], int] | None:
    """The most frequent adjacent pair of `tokens` and how many times it occurs.

    Every adjacent position counts, overlapping ones too: [7, 7, 7] holds (7, 7) twice.
    Ties go to the pair whose first occurrence comes first: in [3, 4, 1, 2, 1, 2, 3, 4]
    both (3, 4) and (1, 2) occur twice, and the answer is ((3, 4), 2).

    Args:
        tokens: token ids (a list or a tuple of ints); not modified.

    Returns:
        ((first, second), count), or None when `tokens` has fewer than 2 ids or no
        pair occurs at least twice. Example: [97, 98, 97, 98, 97, 98] → ((97, 98), 3).
    """
    # BEGIN SOLUTION: count each pair (tokens[i], tokens[i + 1]) in a dict, then pick the best.
    counts: dict[tuple[int, int], int] = {}  # a dict remembers the order of first insertion
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    if not counts:
        return None
    best = max(counts, key=counts.__getitem__)  # max keeps the first of equal counts
    return (best, counts[best]) if counts[best] >= 2 else None
    # END SOLUTION


def bpe_apply_merge(tokens: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """A new list in which every occurrence of `pair` is replaced by `new_id`.

    Scan from the left; where tokens[i], tokens[i + 1] equal the pair, write new_id and
    skip both, else copy tokens[i]. An id that was just merged is never reused, so
    [7, 7, 7] with pair (7, 7) becomes [new_id, 7], and [7, 7, 7, 7] becomes
    [new_id, new_id]. A last, unpaired id is copied.

    Args:
        tokens: token ids (a list or a tuple of ints); not modified.
        pair: the (first, second) pair to replace; (1, 2) does not match 2, 1.
        new_id: the id that replaces each occurrence.

    Returns:
        A new list, at most len(tokens) long. Example: [97, 98, 97, 98, 97, 98] with
        pair (97, 98) and new_id 99 → [99, 99, 99].
    """
    # BEGIN SOLUTION: walk i from 0; on a match append new_id and step 2, else copy and step 1.
    out: list[int] = []
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and tokens[i] == pair[0] and tokens[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out
    # END SOLUTION
