"""Learning-rate schedules: linear warmup, then a cosine decay to a floor.

For step s = 1, 2, ... (the number of the update about to be taken)::

    warmup:  lr(s) = max_lr · s / warmup                          for s <= warmup
    cosine:  lr(s) = min_lr + ½ (max_lr - min_lr) (1 + cos(π p))   for warmup < s < total
             with p = (s - warmup) / (total - warmup)
    after:   lr(s) = min_lr                                       for s >= total

Warmup keeps the first steps small while Adam's second-moment estimate is still noisy;
the cosine lets the last steps settle. The C course's `warmup_cosine_lr` is the same
curve, except that its step 0 has learning rate 0 (a wasted step); here step 1 already
moves. Deliberately not here: step decay, restarts, per-parameter rates.

Example:
    >>> [round(warmup_cosine_lr(s, 1.0, 0.0, warmup=2, total=4), 3) for s in (1, 2, 3, 4, 5)]
    [0.5, 1.0, 0.5, 0.0, 0.0]
"""

from __future__ import annotations

import math

__all__ = ["cosine_lr", "warmup_cosine_lr"]


def cosine_lr(progress: float, max_lr: float, min_lr: float) -> float:
    """Half a cosine from `max_lr` (progress 0) to `min_lr` (progress >= 1).

    Example:
        >>> round(cosine_lr(0.5, 1.0, 0.2), 6)
        0.6
    """
    p = min(max(progress, 0.0), 1.0)
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * p))


def warmup_cosine_lr(step: int, max_lr: float, min_lr: float, warmup: int, total: int) -> float:
    """The learning rate of update number `step` (1-based); see the module docstring.

    Args:
        step: the update about to be taken, >= 1.
        max_lr: the peak, reached at the end of warmup.
        min_lr: the floor, reached at `total`.
        warmup: number of warmup steps (0 for none).
        total: the step at which the cosine reaches `min_lr`; must exceed `warmup`
            unless both are 0 or equal (then: warmup, then the floor).

    Returns:
        The learning rate.

    Raises:
        ValueError: for step < 1, warmup < 0, total < warmup or min_lr > max_lr.
    """
    if step < 1 or warmup < 0 or total < warmup or not 0 <= min_lr <= max_lr:
        raise ValueError(
            f"need step >= 1, 0 <= warmup <= total and 0 <= min_lr <= max_lr; got step={step}, "
            f"warmup={warmup}, total={total}, min_lr={min_lr}, max_lr={max_lr}"
        )
    if step <= warmup:
        return max_lr * step / warmup
    if step >= total:
        return min_lr
    return cosine_lr((step - warmup) / (total - warmup), max_lr, min_lr)
