"""Mutant: checks only that targets are >= 0; a target of V then fails with numpy's IndexError."""
# zh: 只检查 target ≥ 0：target = V 时变成 numpy 自己的 IndexError

# fails: loss_errors, grad_errors

import numpy as np

from framework import Tensor, as_tensor


def _logits_and_targets(logits: Tensor, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """logits as float64 [S, V] and targets as ints; the upper bound is not checked."""
    z = as_tensor(logits, "logits").numpy().astype(np.float64)
    if z.ndim != 2:
        raise ValueError(f"logits must be 2-D, got {z.shape}")
    y = np.asarray(targets, dtype=np.int64)
    if y.shape[0] != z.shape[0]:
        raise ValueError(f"targets has {y.shape[0]} entries, logits has {z.shape[0]} rows")
    if y.size and y.min() < 0:
        raise ValueError(f"targets must be >= 0, got {y.tolist()}")
    return z, y
