"""Mutant: returns the gradient flattened to [S·V] instead of [S, V]."""
# zh: 梯度被拉平成 [S·V]，而不是 [S, V]

# fails: grad_values, grad_mean, grad_stable, arrays_and_views

import numpy as np

from framework import Tensor, tensor_from


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> Tensor:
    """(softmax - one_hot) / S, as one long row."""
    z, y = _logits_and_targets(logits, targets)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    grad = e / e.sum(axis=1, keepdims=True)
    grad[np.arange(len(y)), y] -= 1.0
    return tensor_from((grad / len(y)).reshape(-1))
