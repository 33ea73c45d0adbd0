"""Mutant: embedding_backward assigns instead of accumulating (grad[id] = g): repeats keep one row.

With ids [0, 2, 2] row 2 gets one gradient instead of two.
"""

# zh: embedding_backward 用赋值 grad[id] = g，重复的 id 只留下一行
# fails: backward_repeated, backward_gradcheck

from collections.abc import Sequence

from framework.embedding import Embedding
from framework.tensor import Tensor, as_tensor, tensor_zeros


def embedding_backward(emb: Embedding, token_ids: Sequence[int], grad_out: Tensor) -> Tensor:
    """[V, H] gradient of the token table: row id collects every grad_out row with that id."""
    ids = _check_ids(emb, token_ids)
    g = as_tensor(grad_out, "grad_out").numpy()
    if g.shape != (len(ids), emb.hidden_dim):
        raise ValueError(f"grad_out must be [{len(ids)}, {emb.hidden_dim}], got {g.shape}")
    grad = tensor_zeros((emb.vocab_size, emb.hidden_dim))
    for pos, tid in enumerate(ids):
        grad.numpy()[tid] = g[pos]
    return grad
