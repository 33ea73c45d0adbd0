"""Mutant: greedy returns the largest logit itself instead of its index."""

# zh: 贪心返回最大的 logit 值本身，而不是它的下标
# fails: greedy_first_max, greedy_rules, temperature_greedy, top_k_temperature

from framework import Tensor


def sample_greedy(logits: Tensor) -> int:
    return float(_logits(logits).max())
