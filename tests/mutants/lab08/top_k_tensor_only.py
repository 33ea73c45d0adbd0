"""Mutant: top-k reads logits.numpy(), so a plain numpy array argument fails there."""

# zh: top-k 直接调用 logits.numpy()，传入普通 numpy 数组就出错
# fails: top_k_rules

import numpy as np

from framework import Tensor


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    x = logits.numpy().astype(np.float64)
    if 0 < k < x.size:
        order = np.argsort(-x, kind="stable")
        x[order[k:]] = -np.inf
    return sample_temperature(x, temperature, rng)
