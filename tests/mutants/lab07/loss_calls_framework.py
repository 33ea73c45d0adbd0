"""Mutant: cross_entropy_loss hands the work to the framework's reference cross_entropy_loss."""
# zh: cross_entropy_loss 交给框架的 cross_entropy_loss 去算

# fails: loss_values, loss_stable, loss_errors, grad_mean, arrays_and_views

from framework import Tensor
from framework.loss import cross_entropy_loss as _reference


def cross_entropy_loss(logits: Tensor, targets: Sequence[int]) -> float:
    """The framework's answer."""
    return _reference(logits, targets)
