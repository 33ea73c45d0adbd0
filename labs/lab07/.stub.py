"""Lab07 — the maths of one training step, written by you.

    loss   = mean_s( logsumexp(z_s) - z_s[y_s] )          -> cross_entropy_loss
    dz     = (softmax(z) - one_hot(y)) / S                -> softmax_ce_grad
    p, m, v  <- one AdamW update from the gradient        -> adam_step  (in place)

The framework's `GPTModel.forward_batch` gives the logits and its `backward` turns dz into
a gradient for every weight; the training loop (`minillm train`) chains all of it. Here you
write the three pieces of maths in between. Run `make test` after every change; `TASK.md`
explains each function.

Arguments may be Tensors or numpy arrays: `as_tensor(x, "x")` turns either into a Tensor,
and `t.numpy()` is a shaped, writable view of a Tensor's memory. You may use numpy and
`framework.softmax` (lab04), but not the framework's own `framework.loss` or
`framework.optimizer`: the point is to write them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np  # noqa: F401

from framework import Tensor, as_tensor, tensor_from  # noqa: F401


def cross_entropy_loss(logits: Tensor, targets: Sequence[int]) -> float:
    """Mean cross-entropy of next-token logits against the targets.

    loss = (1/S) Σ_s ( log Σ_j exp(z[s, j]) − z[s, targets[s]] ), with each row's maximum
    subtracted inside the log-sum-exp, so that logits of ±1e4 give a finite loss.

    Args:
        logits: shape [S, V] (a Tensor or numpy array); not modified.
        targets: S ints in [0, V) (a list or a numpy int array).

    Returns:
        The loss as a Python float.

    Raises:
        ValueError: if logits is not 2-D, len(targets) != S, or a target is outside [0, V).
    """
    # TODO(lab07): check the inputs, then a stable log-sum-exp per row, minus the target.
    raise NotImplementedError("lab07: implement cross_entropy_loss")


def softmax_ce_grad(logits: Tensor, targets: Sequence[int]) -> Tensor:
    """Gradient of `cross_entropy_loss` with respect to the logits.

    grad[s] = (softmax(z[s]) − one_hot(targets[s])) / S: divided by S because the loss is
    a mean over the S positions. Each row sums to 0.

    Args:
        logits: shape [S, V]; not modified.
        targets: S ints in [0, V).

    Returns:
        A new Tensor of shape [S, V].

    Raises:
        ValueError: like `cross_entropy_loss`.
    """
    # TODO(lab07): a stable softmax per row, subtract 1 at each target, divide by S.
    raise NotImplementedError("lab07: implement softmax_ce_grad")


def adam_step(
    param: Tensor,
    grad: Tensor,
    m: Tensor,
    v: Tensor,
    t: int,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 0.0,
) -> None:
    """One AdamW update, in place, in the order of torch.optim.AdamW.

        param -= lr · weight_decay · param                  (decoupled decay, first)
        m = β₁·m + (1 − β₁)·grad          v = β₂·v + (1 − β₂)·grad²
        m̂ = m / (1 − β₁ᵗ)                 v̂ = v / (1 − β₂ᵗ)
        param -= lr · m̂ / (√v̂ + eps)

    Args:
        param, m, v: same shape; Tensors or numpy arrays, all three changed in place
            (m and v keep the raw averages, not m̂ and v̂).
        grad: same shape; not modified.
        t: the step number, 1 for the first update.
        lr, beta1, beta2, eps, weight_decay: the hyperparameters.

    Returns:
        None.

    Raises:
        ValueError: if the shapes differ or t < 1 (then nothing is changed).
    """
    # TODO(lab07): decay, update m and v in place, bias-correct, update param in place.
    raise NotImplementedError("lab07: implement adam_step")
