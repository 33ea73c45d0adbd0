"""Mutant: divides the caller's logits by T in place through the numpy() view."""

# zh: 通过 numpy() 视图把调用者的 logits 原地除以 T
# fails: temperature_greedy, temperature_shape, temperature_rules

import numpy as np

from framework import Tensor, as_tensor


def sample_temperature(logits: Tensor, temperature: float, rng: np.random.Generator) -> int:
    x = _logits(logits)
    if temperature <= 0:
        return sample_greedy(logits)
    view = as_tensor(logits, "logits").numpy()
    view /= temperature
    e = np.exp(view - view.max())
    cdf = np.cumsum(e / e.sum())
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(i, x.size - 1)
