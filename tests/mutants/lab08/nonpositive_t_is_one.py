"""Mutant: T <= 0 treated as T = 1, not as greedy."""

# zh: T ≤ 0 被当作 T = 1，而不是贪心
# fails: temperature_greedy, top_k_temperature

import numpy as np

from framework import Tensor


def sample_temperature(logits: Tensor, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if temperature <= 0:
        temperature = 1.0
    e = np.exp((x - x.max()) / temperature)
    cdf = np.cumsum(e / e.sum())
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(i, x.size - 1)
