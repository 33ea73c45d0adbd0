"""Mutant: softmax - one_hot, not divided by S (the per-position gradient of the C course)."""
# zh: 梯度是 softmax − one_hot，没有除以 S

# fails: grad_mean, grad_stable

import numpy as np

from framework import Tensor, tensor_from


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> Tensor:
    """softmax(logits) - one_hot(targets)."""
    z, y = _logits_and_targets(logits, targets)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    grad = e / e.sum(axis=1, keepdims=True)
    grad[np.arange(len(y)), y] -= 1.0
    return tensor_from(grad)
