"""Mutant: embedding_backward allocates the gradient like grad_out ([S, H]) instead of the table.

With ids [0, 2, 2] every row fits, so only the shape is wrong; larger ids crash.
"""

# zh: 梯度按 grad_out 的形状 [S, H] 分配，不是词表的 [V, H]
# fails: backward_repeated, backward_gradcheck, accepts_arrays, backward_views

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
    grad = tensor_zeros(g.shape)
    np.add.at(grad.numpy(), ids, g)  # repeated ids add up; grad[ids] += g would not
    return grad
