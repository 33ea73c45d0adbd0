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


# BEGIN SOLUTION
def _logits_and_targets(logits: Tensor, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """logits as a float64 [S, V] array and targets as an int array, both checked."""
    z = as_tensor(logits, "logits").numpy().astype(np.float64)
    if z.ndim != 2 or z.shape[1] == 0:
        raise ValueError(f"logits must have shape [S, V] with V >= 1, got {z.shape}")
    y = np.asarray(targets)
    if y.ndim != 1 or (y.size and (y.dtype == bool or not np.issubdtype(y.dtype, np.integer))):
        raise TypeError(f"targets must be a sequence of ints, got {y.dtype} of shape {y.shape}")
    if y.shape[0] != z.shape[0]:
        raise ValueError(f"targets has {y.shape[0]} entries, logits has {z.shape[0]} rows")
    if y.size and (y.min() < 0 or y.max() >= z.shape[1]):
        raise ValueError(f"targets must be in [0, {z.shape[1]}), got {y.tolist()}")
    return z, y.astype(np.int64)


# END SOLUTION


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
    # BEGIN SOLUTION: check the inputs, then a stable log-sum-exp per row, minus the target.
    z, y = _logits_and_targets(logits, targets)
    m = z.max(axis=1, keepdims=True)  # (S, 1)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))  # (S,)
    return float((lse - z[np.arange(len(y)), y]).mean())
    # END SOLUTION


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
    # BEGIN SOLUTION: a stable softmax per row, subtract 1 at each target, divide by S.
    z, y = _logits_and_targets(logits, targets)
    e = np.exp(z - z.max(axis=1, keepdims=True))  # (S, V)
    grad = e / e.sum(axis=1, keepdims=True)
    grad[np.arange(len(y)), y] -= 1.0
    return tensor_from(grad / len(y))
    # END SOLUTION


# BEGIN SOLUTION
def _writable(x: Tensor | np.ndarray, name: str) -> np.ndarray:
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"{name} must be a Tensor or numpy array, not {type(x).__name__}")


# END SOLUTION


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
    # BEGIN SOLUTION: decay, update m and v in place, bias-correct, update param in place.
    p, mm, vv = _writable(param, "param"), _writable(m, "m"), _writable(v, "v")
    g = as_tensor(grad, "grad").numpy()
    for name, arr in (("grad", g), ("m", mm), ("v", vv)):
        if arr.shape != p.shape:
            raise ValueError(f"{name} has shape {arr.shape}, param has {p.shape}")
    if isinstance(t, bool) or not isinstance(t, int | np.integer) or t < 1:
        raise ValueError(f"t is the step number and must be an int >= 1, got {t!r}")
    p -= lr * weight_decay * p  # decoupled decay, on the value before the update
    mm[...] = beta1 * mm + (1 - beta1) * g
    vv[...] = beta2 * vv + (1 - beta2) * g * g
    m_hat = mm / (1 - beta1**t)
    v_hat = vv / (1 - beta2**t)
    p -= lr * m_hat / (np.sqrt(v_hat) + eps)
    # END SOLUTION
