"""Mutant: calls logits.numpy(), so a plain numpy array argument fails."""

# zh: 直接调用 logits.numpy()，传入普通 numpy 数组就出错
# fails: greedy_rules, temperature_rules, top_k_support, top_k_ties, top_k_no_filter, top_k_temperature, top_k_rules

import numpy as np

from framework import Tensor


def _logits(logits: Tensor) -> np.ndarray:
    x = logits.numpy().astype(np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"logits must be a non-empty 1-D vector, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("logits holds NaN")
    return x
