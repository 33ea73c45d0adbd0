"""Mutant: reads logits.data as if it were row-major, ignoring strides and offset."""
# zh: 把 logits.data 当作行主序来读，忽略了 strides 和 offset

# fails: arrays_and_views
# blind: views

import numpy as np

from framework import Tensor, as_tensor


def _logits_and_targets(logits: Tensor, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """logits from the flat storage, reshaped; targets checked."""
    lt = as_tensor(logits, "logits")
    z = lt.data[: lt.size].reshape(lt.shape).astype(np.float64)
    if z.ndim != 2:
        raise ValueError(f"logits must be 2-D, got {z.shape}")
    y = np.asarray(targets, dtype=np.int64)
    if y.shape[0] != z.shape[0]:
        raise ValueError(f"targets has {y.shape[0]} entries, logits has {z.shape[0]} rows")
    if y.size and (y.min() < 0 or y.max() >= z.shape[1]):
        raise ValueError(f"targets must be in [0, {z.shape[1]}), got {y.tolist()}")
    return z, y
