"""Mutant: takes only a Tensor grad_out (calls .numpy()) and only Python ints as ids."""

# zh: 只接受 Tensor 的 grad_out（直接调用 .numpy()）和 Python int 的 ids
# blind: arrays
# fails: accepts_arrays

from collections.abc import Sequence

import numpy as np

from framework.embedding import Embedding
from framework.tensor import Tensor, tensor_zeros


def _check_ids(emb: Embedding, token_ids: Sequence[int]) -> list[int]:
    for t in token_ids:
        if isinstance(t, bool) or not isinstance(t, int):
            raise TypeError(f"token ids must be ints, got {type(t).__name__}")
    ids = list(token_ids)
    if len(ids) > emb.max_seq_len:
        raise ValueError(f"token_ids has {len(ids)} ids, more than max_seq_len = {emb.max_seq_len}")
    for k, tid in enumerate(ids):
        if not 0 <= tid < emb.vocab_size:
            raise ValueError(f"token_ids[{k}] = {tid} is outside [0, {emb.vocab_size})")
    return ids


def embedding_backward(emb: Embedding, token_ids: Sequence[int], grad_out: Tensor) -> Tensor:
    """[V, H] gradient of the token table: row id collects every grad_out row with that id."""
    ids = _check_ids(emb, token_ids)
    g = grad_out.numpy()
    if g.shape != (len(ids), emb.hidden_dim):
        raise ValueError(f"grad_out must be [{len(ids)}, {emb.hidden_dim}], got {g.shape}")
    grad = tensor_zeros((emb.vocab_size, emb.hidden_dim))
    np.add.at(grad.numpy(), ids, g)  # repeated ids add up; grad[ids] += g would not
    return grad
