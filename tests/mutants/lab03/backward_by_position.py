"""Mutant: embedding_backward adds grad_out row pos into table row pos instead of row ids[pos]."""

# zh: embedding_backward 把第 pos 行梯度加到表的第 pos 行，不是第 ids[pos] 行
# fails: backward_repeated, backward_gradcheck

from collections.abc import Sequence

import numpy as np

from framework.embedding import Embedding
from framework.tensor import Tensor, as_tensor, tensor_zeros


def embedding_backward(emb: Embedding, token_ids: Sequence[int], grad_out: Tensor) -> Tensor:
    """[V, H] gradient of the token table: row id collects every grad_out row with that id."""
    ids = _check_ids(emb, token_ids)
    g = as_tensor(grad_out, "grad_out").numpy()
    if g.shape != (len(ids), emb.hidden_dim):
        raise ValueError(f"grad_out must be [{len(ids)}, {emb.hidden_dim}], got {g.shape}")
    grad = tensor_zeros((emb.vocab_size, emb.hidden_dim))
    np.add.at(grad.numpy(), list(range(len(ids))), g)
    return grad
