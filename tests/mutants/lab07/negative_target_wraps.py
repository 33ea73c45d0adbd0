"""Mutant: checks only target < V; a target of -1 silently picks the last logit."""
# zh: 只检查 target < V：target = -1 悄悄取到了最后一个 logit

# fails: loss_errors

import numpy as np

from framework import Tensor, as_tensor


def _logits_and_targets(logits: Tensor, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """logits as float64 [S, V] and targets as ints; negative targets slip through."""
    z = as_tensor(logits, "logits").numpy().astype(np.float64)
    if z.ndim != 2:
        raise ValueError(f"logits must be 2-D, got {z.shape}")
    y = np.asarray(targets, dtype=np.int64)
    if y.shape[0] != z.shape[0]:
        raise ValueError(f"targets has {y.shape[0]} entries, logits has {z.shape[0]} rows")
    if y.size and y.max() >= z.shape[1]:
        raise ValueError(f"targets must be < {z.shape[1]}, got {y.tolist()}")
    return z, y
