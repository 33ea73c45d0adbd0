"""Mutant: embedding_forward returns the position encoding alone and ignores the token table.

The C course's four checks all pass for this one.
"""

# zh: embedding_forward 只返回位置编码，没有查词表
# fails: forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck

from collections.abc import Sequence

import numpy as np

from framework.embedding import Embedding
from framework.tensor import Tensor, tensor_from


def embedding_forward(emb: Embedding, token_ids: Sequence[int]) -> Tensor:
    """[S, H]: row pos = token_embedding[token_ids[pos]] + PE(pos, ·)."""
    ids = _check_ids(emb, token_ids)
    h = emb.hidden_dim
    table = emb.token_embedding.numpy()
    out = np.zeros((len(ids), h), dtype=np.float64)  # (S, H)
    for pos, tid in enumerate(ids):
        pe = [pe_sinusoidal(pos, d, h) for d in range(h)]  # (H,)
        out[pos] = np.array(pe)
    return tensor_from(out)
