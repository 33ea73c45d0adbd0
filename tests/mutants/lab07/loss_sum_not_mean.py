"""Mutant: the loss is summed over positions, not averaged (no longer matches its gradient)."""
# zh: 损失对各位置求和，而不是取平均

# fails: loss_values, loss_stable, grad_mean

import numpy as np

from framework import Tensor


def cross_entropy_loss(logits: Tensor, targets: Sequence[int]) -> float:
    """Σ_s logsumexp(z_s) - z_s[target_s]."""
    z, y = _logits_and_targets(logits, targets)
    m = z.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
    return float((lse - z[np.arange(len(y)), y]).sum())
