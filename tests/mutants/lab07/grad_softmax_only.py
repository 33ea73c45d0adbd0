"""Mutant: forgets the one-hot: returns softmax / S (rows sum to 1/S, not 0)."""
# zh: 忘了减去 one-hot：返回 softmax / S（每行之和是 1/S，不是 0）

# fails: grad_values, grad_mean, grad_stable

import numpy as np

from framework import Tensor, tensor_from


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> Tensor:
    """softmax(logits) / S."""
    z, y = _logits_and_targets(logits, targets)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return tensor_from(e / e.sum(axis=1, keepdims=True) / len(y))
