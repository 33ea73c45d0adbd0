"""Mutant: top-k writes -inf into the caller's logits through the numpy() view."""

# zh: top-k 通过 numpy() 视图把 -inf 写进了调用者的 logits
# fails: top_k_rules

import numpy as np

from framework import Tensor, as_tensor


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    _logits(logits)
    x = as_tensor(logits, "logits").numpy()
    if 0 < k < x.size:
        order = np.argsort(-x, kind="stable")
        x[order[k:]] = -np.inf
    return sample_temperature(x, temperature, rng)
