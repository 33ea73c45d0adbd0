"""Mutant: subtracts the row max through the logits' own view, changing the caller's logits."""
# zh: 通过 logits 自己的视图减去行最大值，改掉了调用者的 logits

# fails: loss_values

import numpy as np

from framework import Tensor, as_tensor


def cross_entropy_loss(logits: Tensor, targets: Sequence[int]) -> float:
    """Stable cross-entropy, but `v -= max` writes into the input."""
    _, y = _logits_and_targets(logits, targets)
    v = as_tensor(logits, "logits").numpy()
    v -= v.max(axis=1, keepdims=True)
    lse = np.log(np.exp(v.astype(np.float64)).sum(axis=1))
    return float((lse - v[np.arange(len(y)), y]).mean())
