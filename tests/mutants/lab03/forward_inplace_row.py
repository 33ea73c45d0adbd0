"""Mutant: embedding_forward adds the PE into a view of the table row, changing emb.token_embedding.

table[tid] with an int index is a numpy view, so `row += pe` writes into the table;
a repeated id then also gets the PE of both positions.
"""

# zh: 把 PE 加进词表行的视图里，改掉了 emb.token_embedding
# fails: forward_values, forward_distinguishes, forward_errors, backward_gradcheck

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
        row = table[tid]
        row += np.array(pe, dtype=np.float32)
        out[pos] = row
    return tensor_from(out)
