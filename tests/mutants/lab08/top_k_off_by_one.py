"""Mutant: top-k keeps k + 1 logits (slices order[k + 1:])."""

# zh: top-k 多留了一个：保留了 k + 1 个 logit
# fails: top_k_support, top_k_ties, top_k_temperature

import numpy as np

from framework import Tensor


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if 0 < k < x.size:
        order = np.argsort(-x, kind="stable")
        x[order[k + 1 :]] = -np.inf
    return sample_temperature(x, temperature, rng)
