"""Mutant: greedy subtracts the maximum from the caller's logits, in place."""

# zh: 贪心在调用者的 logits 上原地减去最大值
# fails: greedy_rules

import numpy as np

from framework import Tensor, as_tensor


def sample_greedy(logits: Tensor) -> int:
    _logits(logits)
    view = as_tensor(logits, "logits").numpy()
    view -= view.max()
    return int(np.argmax(view))
