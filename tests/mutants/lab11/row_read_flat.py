"""Mutant: reads a row's flat data, ignoring its strides and offset."""

# zh: 按存储顺序读行的 data，忽略了 strides 和 offset
# fails: append_forms

import numpy as np

from framework import Tensor, as_tensor
from framework.kv_cache import KVCache


def _row(cache: KVCache, row: Tensor, name: str):
    t = as_tensor(row, name)
    if t.size != cache.hidden_dim or t.ndim > 2:
        raise ValueError(f"{name} must hold {cache.hidden_dim} numbers")
    return np.asarray(t.data[: cache.hidden_dim])
