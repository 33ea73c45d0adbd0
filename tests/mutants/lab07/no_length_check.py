"""Mutant: never compares len(targets) with S, and uses only the rows both have."""
# zh: 没有比较 len(targets) 和 S，只用了两者都有的那几行

# fails: loss_errors, grad_errors

import numpy as np

from framework import Tensor, as_tensor


def _logits_and_targets(logits: Tensor, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """logits as float64 [S, V] and targets as ints in range; the count is not checked."""
    z = as_tensor(logits, "logits").numpy().astype(np.float64)
    if z.ndim != 2:
        raise ValueError(f"logits must be 2-D, got {z.shape}")
    y = np.asarray(targets, dtype=np.int64)
    if y.size and (y.min() < 0 or y.max() >= z.shape[1]):
        raise ValueError(f"targets must be in [0, {z.shape[1]}), got {y.tolist()}")
    n = min(len(y), z.shape[0])
    return z[:n], y[:n]
