"""Handout example: the reference solution, but returning numpy arrays, not Tensors.

A student may return either (the checks and every handout snippet accept both).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from framework.embedding import Embedding
from framework.tensor import Tensor, as_tensor


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """sin(pos / 10000^(2i/H)) for dim = 2i, cos(...) for dim = 2i + 1."""
    i = dim // 2
    angle = pos / 10000.0 ** (2 * i / hidden_dim)  # float division: 2i/H is a fraction
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def _check_ids(emb: Embedding, token_ids: Sequence[int]) -> list[int]:
    ids = [int(t) for t in token_ids]
    if len(ids) > emb.max_seq_len:
        raise ValueError(f"token_ids has {len(ids)} ids, more than max_seq_len = {emb.max_seq_len}")
    for k, tid in enumerate(ids):
        if not 0 <= tid < emb.vocab_size:
            raise ValueError(f"token_ids[{k}] = {tid} is outside [0, {emb.vocab_size})")
    return ids


def embedding_forward(emb: Embedding, token_ids: Sequence[int]) -> np.ndarray:
    """[S, H]: row pos = token_embedding[token_ids[pos]] + PE(pos, ·)."""
    ids = _check_ids(emb, token_ids)
    h = emb.hidden_dim
    table = emb.token_embedding.numpy()
    out = np.zeros((len(ids), h), dtype=np.float64)  # (S, H)
    for pos, tid in enumerate(ids):
        pe = [pe_sinusoidal(pos, d, h) for d in range(h)]  # (H,)
        out[pos] = table[tid] + np.array(pe)
    return out.astype(np.float32)


def embedding_backward(
    emb: Embedding, token_ids: Sequence[int], grad_out: Tensor
) -> np.ndarray:
    """[V, H] gradient of the token table: row id collects every grad_out row with that id."""
    ids = _check_ids(emb, token_ids)
    g = as_tensor(grad_out, "grad_out").numpy()
    if g.shape != (len(ids), emb.hidden_dim):
        raise ValueError(f"grad_out must be [{len(ids)}, {emb.hidden_dim}], got {g.shape}")
    grad = np.zeros((emb.vocab_size, emb.hidden_dim), dtype=np.float32)  # (V, H)
    np.add.at(grad, ids, g)  # repeated ids add up; grad[ids] += g would not
    return grad
