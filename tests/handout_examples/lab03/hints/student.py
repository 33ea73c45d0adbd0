"""Handout example: lab03's hints in TASK.md, followed word for word."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from framework.embedding import Embedding
from framework.tensor import Tensor, as_tensor, tensor_from


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    i = dim // 2
    angle = pos / 10000.0 ** (2 * i / hidden_dim)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def embedding_forward(emb: Embedding, token_ids: Sequence[int]) -> Tensor:
    for k, tid in enumerate(token_ids):
        if not 0 <= tid < emb.vocab_size:
            raise ValueError(f"token_ids[{k}] = {tid} is outside [0, {emb.vocab_size})")
    if len(token_ids) > emb.max_seq_len:
        raise ValueError(f"{len(token_ids)} ids, more than max_seq_len = {emb.max_seq_len}")
    H = emb.hidden_dim
    table = emb.token_embedding.numpy()
    out = np.zeros((len(token_ids), H))
    for pos, tid in enumerate(token_ids):
        out[pos] = table[tid] + [pe_sinusoidal(pos, d, H) for d in range(H)]
    return tensor_from(out)


def embedding_backward(emb: Embedding, token_ids: Sequence[int], grad_out: Tensor) -> Tensor:
    grad = np.zeros((emb.vocab_size, emb.hidden_dim))
    g = as_tensor(grad_out, "grad_out").numpy()
    for pos, tid in enumerate(token_ids):
        grad[tid] += g[pos]
    return tensor_from(grad)
