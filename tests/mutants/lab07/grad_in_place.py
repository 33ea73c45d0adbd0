"""Mutant: computes the gradient inside the caller's logits (softmax written over the view)."""
# zh: 在调用者的 logits 里就地算梯度（softmax 写进了输入的视图）

# fails: grad_values

import numpy as np

from framework import Tensor, as_tensor, tensor_from


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> Tensor:
    """(softmax - one_hot) / S, built in the input's memory."""
    _, y = _logits_and_targets(logits, targets)
    v = as_tensor(logits, "logits").numpy()
    v -= v.max(axis=1, keepdims=True)
    np.exp(v, out=v)
    v /= v.sum(axis=1, keepdims=True)
    v[np.arange(len(y)), y] -= 1.0
    v /= len(y)
    return tensor_from(v)
