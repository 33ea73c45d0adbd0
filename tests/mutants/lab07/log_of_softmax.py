"""Mutant: loss = -log(softmax(z)[target]) in float32: the probability underflows to 0, log gives inf."""
# zh: loss 取 float32 softmax 的 log：概率下溢成 0，log 得到 inf

# fails: loss_stable

import numpy as np

from framework import Tensor, softmax


def cross_entropy_loss(logits: Tensor, targets: Sequence[int]) -> float:
    """Mean of -log p[target] with p = softmax(logits)."""
    z, y = _logits_and_targets(logits, targets)
    p = softmax(z.astype(np.float32)).numpy()
    with np.errstate(divide="ignore"):
        return float(-np.log(p[np.arange(len(y)), y]).mean())
