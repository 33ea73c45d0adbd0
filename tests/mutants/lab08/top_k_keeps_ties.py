"""Mutant: top-k keeps every logit >= the k-th largest, so ties let more than k through."""

# zh: top-k 保留所有 ≥ 第 k 大值的 logit，并列时留下的多于 k 个
# fails: top_k_ties

import numpy as np

from framework import Tensor


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if 0 < k < x.size:
        kth = np.sort(x)[::-1][k - 1]
        x[x < kth] = -np.inf
    return sample_temperature(x, temperature, rng)
