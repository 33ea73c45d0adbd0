"""Mutant: draws from numpy's global generator instead of the rng argument."""

# zh: 用 numpy 的全局随机数生成器，而不是传进来的 rng
# fails: temperature_rules, top_k_rules

import numpy as np

from framework import Tensor


def sample_temperature(logits: Tensor, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if temperature <= 0:
        return sample_greedy(logits)
    e = np.exp((x - x.max()) / temperature)
    cdf = np.cumsum(e / e.sum())
    i = int(np.searchsorted(cdf, np.random.random() * cdf[-1], side="right"))
    return min(i, x.size - 1)
