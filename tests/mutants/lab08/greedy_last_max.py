"""Mutant: greedy updates on >=, so the last of several equal maxima wins."""

# fails: greedy_first_max, temperature_greedy

import numpy as np

from framework import Tensor


def sample_greedy(logits: Tensor) -> int:
    x = _logits(logits)
    best = 0
    for i in range(x.size):
        if x[i] >= x[best]:
            best = i
    return best
