"""Mutant: no T <= 0 branch: T = 0 divides by zero, T < 0 inverts the distribution."""

# zh: 没有 T ≤ 0 的分支：T = 0 除以零，T < 0 把分布反过来
# fails: temperature_greedy, top_k_temperature

import numpy as np

from framework import Tensor


def sample_temperature(logits: Tensor, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    with np.errstate(all="ignore"):
        e = np.exp((x - x.max()) / temperature)
    cdf = np.cumsum(e / e.sum())
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(i, x.size - 1)
