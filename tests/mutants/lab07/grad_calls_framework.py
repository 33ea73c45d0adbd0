"""Mutant: softmax_ce_grad returns the framework's cross_entropy_with_grad gradient."""
# zh: softmax_ce_grad 直接返回框架 cross_entropy_with_grad 算出的梯度

# fails: grad_values, grad_mean, grad_stable, grad_errors, arrays_and_views

import numpy as np

from framework import Tensor, as_tensor, tensor_from
from framework.loss import cross_entropy_with_grad


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> Tensor:
    """The framework's answer."""
    z = as_tensor(logits, "logits").numpy()
    return tensor_from(cross_entropy_with_grad(z, np.asarray(targets))[1])
