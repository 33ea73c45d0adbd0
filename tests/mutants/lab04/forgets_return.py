"""Mutant: computes the scores but forgets to return them."""
# zh: 算出了分数却忘了 return

# fails: scores_identity, scores_general, chain_causal, worked_example, against_framework, accepts_arrays, strided_views

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def attention_scores(q: Tensor, k: Tensor, scale: float) -> Tensor:
    """Scaled dot-product scores [S, T] = scale · q @ kᵀ."""
    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes (hd) differ")
    out = tensor_from(np.float32(scale) * (qt.numpy() @ kt.numpy().T))
