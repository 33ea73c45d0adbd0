"""Mutant: the running maximum starts at 0, so all-negative logits give index 0."""

# zh: 最大值的初值设成 0，logits 全为负数时返回下标 0
# fails: greedy_first_max

from framework import Tensor


def sample_greedy(logits: Tensor) -> int:
    x = _logits(logits)
    best, best_value = 0, 0.0
    for i in range(x.size):
        if x[i] > best_value:
            best, best_value = i, x[i]
    return best
