"""Mutant: no range check on the ids: a negative id wraps to the end of the table (numpy indexing).

id = vocab_size then fails with numpy's IndexError instead of a ValueError.
"""

# zh: 没有检查 id 的范围：负 id 回绕到表的末尾
# fails: forward_errors

from collections.abc import Sequence

from framework.embedding import Embedding


def _check_ids(emb: Embedding, token_ids: Sequence[int]) -> list[int]:
    ids = [int(t) for t in token_ids]
    if len(ids) > emb.max_seq_len:
        raise ValueError(f"token_ids has {len(ids)} ids, more than max_seq_len = {emb.max_seq_len}")
    return ids
