"""Mutant: a row longer than H is cut to its first H numbers instead of refused."""

# zh: 比 H 长的行被截成前 H 个数，而不是拒绝
# fails: append_errors

from framework import Tensor, as_tensor
from framework.kv_cache import KVCache


def _row(cache: KVCache, row: Tensor, name: str):
    arr = as_tensor(row, name).numpy().reshape(-1)
    if arr.size < cache.hidden_dim:
        raise ValueError(f"{name} needs {cache.hidden_dim} numbers, got {arr.size}")
    return arr[: cache.hidden_dim]
