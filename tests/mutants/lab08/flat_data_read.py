"""Mutant: reads the Tensor's flat data, ignoring strides and offset."""

# zh: 直接读 Tensor 的扁平 data，忽略了步长和偏移
# fails: greedy_rules, temperature_rules, top_k_rules

import numpy as np

from framework import Tensor, as_tensor


def _logits(logits: Tensor) -> np.ndarray:
    t = as_tensor(logits, "logits")
    x = t.data[: t.size].astype(np.float64)
    if x.size == 0:
        raise ValueError("logits is empty")
    if np.isnan(x).any():
        raise ValueError("logits holds NaN")
    return x
