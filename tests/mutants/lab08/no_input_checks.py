"""Mutant: no NaN or empty check; NaN logits silently give index 0."""

# zh: 没有检查 NaN 和空输入，含 NaN 的 logits 悄悄返回 0
# fails: greedy_rules, temperature_rules, top_k_rules

import numpy as np

from framework import Tensor, as_tensor


def _logits(logits: Tensor) -> np.ndarray:
    x = as_tensor(logits, "logits").numpy().astype(np.float64)
    if x.size == 0:
        return np.zeros(1)
    return np.nan_to_num(x, nan=-1e30)
