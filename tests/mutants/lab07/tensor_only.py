"""Mutant: calls logits.numpy() directly, so a numpy array (which has no .numpy) fails."""
# zh: 直接调用 logits.numpy()：传入没有 .numpy 的 numpy 数组就出错

# fails: arrays_and_views
# blind: arrays

import numpy as np

from framework import Tensor


def _logits_and_targets(logits: Tensor, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """logits as float64 [S, V] and targets as ints, both checked; logits must be a Tensor."""
    z = logits.numpy().astype(np.float64)
    if z.ndim != 2:
        raise ValueError(f"logits must be 2-D, got {z.shape}")
    y = np.asarray(targets, dtype=np.int64)
    if y.shape[0] != z.shape[0]:
        raise ValueError(f"targets has {y.shape[0]} entries, logits has {z.shape[0]} rows")
    if y.size and (y.min() < 0 or y.max() >= z.shape[1]):
        raise ValueError(f"targets must be in [0, {z.shape[1]}), got {y.tolist()}")
    return z, y
