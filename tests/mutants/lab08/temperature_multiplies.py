"""Mutant: the temperature multiplies the logits instead of dividing them."""

# zh: 温度乘到 logits 上，而不是除
# fails: temperature_greedy, temperature_shape, top_k_temperature

import numpy as np

from framework import Tensor


def sample_temperature(logits: Tensor, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if temperature <= 0:
        return sample_greedy(logits)
    e = np.exp((x - x.max()) * temperature)
    cdf = np.cumsum(e / e.sum())
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(i, x.size - 1)
