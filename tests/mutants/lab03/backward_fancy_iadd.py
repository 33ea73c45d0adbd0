"""Mutant: embedding_backward uses grad[ids] += g, which numpy buffers: repeated ids count once.

The classic numpy trap; np.add.at (or an explicit loop) accumulates.
"""

# zh: 用 grad[ids] += g：重复的花式下标只加一次
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
    grad.numpy()[ids] += g
    return grad
