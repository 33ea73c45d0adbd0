"""Mutant: top-k that just returns the greedy choice."""

# zh: top-k 直接返回贪心的结果
# fails: top_k_support, top_k_ties, top_k_no_filter, top_k_temperature

import numpy as np

from framework import Tensor


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    return sample_greedy(logits)
