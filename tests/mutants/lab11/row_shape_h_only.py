"""Mutant: accepts only a row of shape [H], not [1, H]."""

# zh: 只接受形状 [H] 的行，不接受 [1, H]
# fails: append_forms

from framework import Tensor, as_tensor
from framework.kv_cache import KVCache


def _row(cache: KVCache, row: Tensor, name: str):
    arr = as_tensor(row, name).numpy()
    if arr.shape != (cache.hidden_dim,):
        raise ValueError(f"{name} must be [{cache.hidden_dim}], got shape {arr.shape}")
    return arr
