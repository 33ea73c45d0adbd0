"""Lab08, written by following the handout's hints word for word (tested to pass)."""

from __future__ import annotations

import numpy as np

from framework import Tensor, as_tensor


def sample_greedy(logits: Tensor) -> int:
    x = as_tensor(logits, "logits").numpy()
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"logits must be a non-empty 1-D vector, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("logits holds NaN")
    return int(np.argmax(x))


def sample_temperature(logits: Tensor, temperature: float, rng: np.random.Generator) -> int:
    if temperature <= 0:
        return sample_greedy(logits)
    sample_greedy(logits)  # the same checks
    x = as_tensor(logits, "logits").numpy().astype(np.float64)
    e = np.exp((x - x.max()) / temperature)
    cdf = np.cumsum(e / e.sum())
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(i, x.size - 1)


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    sample_greedy(logits)  # the same checks
    x = as_tensor(logits, "logits").numpy().astype(np.float64)
    if 0 < k < x.size:
        order = np.argsort(-x, kind="stable")
        x[order[k:]] = -np.inf
    return sample_temperature(x, temperature, rng)
