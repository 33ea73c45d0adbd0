"""Mutant: top-k hands the work to the framework's own sampler."""

# zh: top-k 把活交给了框架自带的采样器
# fails: top_k_support, top_k_ties, top_k_no_filter, top_k_temperature, top_k_rules

import numpy as np

from framework import Tensor
from framework.sampling import sample


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    _logits(logits)
    return sample(logits, rng, temperature=temperature, top_k=k, top_p=1.0)
