"""Mutant: the range check tests only id >= vocab_size, so -1 silently reads the last row."""

# zh: 范围检查只查了 id >= vocab_size，-1 悄悄取到最后一行
# fails: forward_errors

from collections.abc import Sequence

from framework.embedding import Embedding


def _check_ids(emb: Embedding, token_ids: Sequence[int]) -> list[int]:
    ids = [int(t) for t in token_ids]
    if len(ids) > emb.max_seq_len:
        raise ValueError(f"token_ids has {len(ids)} ids, more than max_seq_len = {emb.max_seq_len}")
    for k, tid in enumerate(ids):
        if tid >= emb.vocab_size:
            raise ValueError(f"token_ids[{k}] = {tid} is outside [0, {emb.vocab_size})")
    return ids
