"""Mutant: the CDF of exp(x - max) is not divided by its sum before the uniform draw."""

# zh: exp(x - max) 的累积和没有除以总和就拿去和均匀随机数比较
# fails: temperature_one, temperature_shape, top_k_support, top_k_ties, top_k_no_filter, top_k_temperature

import numpy as np

from framework import Tensor


def sample_temperature(logits: Tensor, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if temperature <= 0:
        return sample_greedy(logits)
    cdf = np.cumsum(np.exp((x - x.max()) / temperature))
    i = int(np.searchsorted(cdf, rng.random(), side="right"))
    return min(i, x.size - 1)
