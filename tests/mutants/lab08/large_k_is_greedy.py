"""Mutant: k <= 0 or k >= V falls back to greedy instead of 'no filter'."""

# zh: k ≤ 0 或 k ≥ V 时退回贪心，而不是不过滤
# fails: top_k_no_filter

import numpy as np

from framework import Tensor


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if k <= 0 or k >= x.size:
        return sample_greedy(x)
    order = np.argsort(-x, kind="stable")
    x[order[k:]] = -np.inf
    return sample_temperature(x, temperature, rng)
