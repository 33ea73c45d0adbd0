"""Mutant: returns the S per-position losses instead of their mean."""
# zh: 返回 S 个位置各自的损失，而不是它们的平均

# fails: loss_values, loss_stable, grad_mean, arrays_and_views

import numpy as np

from framework import Tensor, tensor_from


def cross_entropy_loss(logits: Tensor, targets: Sequence[int]) -> float:
    """logsumexp(z_s) - z_s[target_s] for every s."""
    z, y = _logits_and_targets(logits, targets)
    m = z.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
    return tensor_from(lse - z[np.arange(len(y)), y])
