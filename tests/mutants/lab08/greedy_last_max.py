"""Mutant: greedy updates on >=, so the last of several equal maxima wins."""

# zh: 贪心用 >= 更新，几个最大值并列时取了最后一个
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
