"""Mutant: embedding_forward adds emb.position_embedding instead of its own pe_sinusoidal values.

Right whenever the stored table is the sinusoidal one; wrong once it changes (it is
trained with the model, and the checks zero it).
"""

# zh: 加的是 emb.position_embedding，不是自己 pe_sinusoidal 的值
# fails: forward_own_pe

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
        pe = emb.position_embedding.numpy()[pos]  # (H,)
        out[pos] = table[tid] + np.array(pe)
    return tensor_from(out)
