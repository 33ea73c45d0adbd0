"""Mutant: refuses any non-finite logit, -inf included (which top-k itself produces)."""

# zh: 拒绝所有非有限的 logit，连 top-k 自己写入的 -inf 也拒绝
# fails: greedy_first_max, top_k_support, top_k_ties, top_k_temperature, top_k_rules

import numpy as np

from framework import Tensor, as_tensor


def _logits(logits: Tensor) -> np.ndarray:
    x = as_tensor(logits, "logits").numpy().astype(np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"logits must be a non-empty 1-D vector, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("logits must be finite")
    return x
