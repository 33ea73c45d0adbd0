"""Mutant: off by one: S == max_seq_len is rejected (>= instead of >)."""

# zh: 长度检查差一：写成 >=，S == max_seq_len 也被拒绝
# fails: forward_errors

from collections.abc import Sequence

from framework.embedding import Embedding


def _check_ids(emb: Embedding, token_ids: Sequence[int]) -> list[int]:
    ids = [int(t) for t in token_ids]
    if len(ids) >= emb.max_seq_len:
        raise ValueError(f"token_ids has {len(ids)} ids, more than max_seq_len = {emb.max_seq_len}")
    for k, tid in enumerate(ids):
        if not 0 <= tid < emb.vocab_size:
            raise ValueError(f"token_ids[{k}] = {tid} is outside [0, {emb.vocab_size})")
    return ids
