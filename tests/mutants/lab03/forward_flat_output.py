"""Mutant: embedding_forward returns a flat [S·H] vector (C-style out[pos·H + d]), not [S, H]."""

# zh: embedding_forward 返回扁平的 [S·H] 向量，不是 [S, H]
# fails: forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck, accepts_arrays

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
        out[pos] = table[tid] + np.array(pe)
    return tensor_from(out.reshape(-1))
