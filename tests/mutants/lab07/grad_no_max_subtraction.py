"""Mutant: the gradient's softmax without the max subtracted: inf / inf = NaN at ±1e4."""
# zh: 梯度里的 softmax 没有先减去每行最大值：±1e4 时 inf / inf 得 NaN

# fails: grad_stable

import numpy as np

from framework import Tensor, tensor_from


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> Tensor:
    """(softmax(logits) - one_hot(targets)) / S."""
    z, y = _logits_and_targets(logits, targets)
    e = np.exp(z)
    grad = e / e.sum(axis=1, keepdims=True)
    grad[np.arange(len(y)), y] -= 1.0
    return tensor_from(grad / len(y))
