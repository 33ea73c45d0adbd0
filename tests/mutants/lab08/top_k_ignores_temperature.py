"""Mutant: top-k samples its survivors at T = 1 whatever the temperature."""

# zh: top-k 过滤后不管温度，总按 T = 1 抽样
# fails: top_k_temperature

import numpy as np

from framework import Tensor


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if temperature <= 0:
        return sample_greedy(x)
    if 0 < k < x.size:
        order = np.argsort(-x, kind="stable")
        x[order[k:]] = -np.inf
    return sample_temperature(x, 1.0, rng)
