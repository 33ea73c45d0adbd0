"""Mutant: no check that S <= max_seq_len: a sequence longer than the model's context is accepted."""

# zh: 没有检查序列长度 S <= max_seq_len
# fails: forward_errors

from collections.abc import Sequence

from framework.embedding import Embedding


def _check_ids(emb: Embedding, token_ids: Sequence[int]) -> list[int]:
    ids = [int(t) for t in token_ids]
    for k, tid in enumerate(ids):
        if not 0 <= tid < emb.vocab_size:
            raise ValueError(f"token_ids[{k}] = {tid} is outside [0, {emb.vocab_size})")
    return ids
