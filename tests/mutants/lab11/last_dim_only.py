"""Mutant: checks only a row's last dimension and takes its first row, so [2, H] passes."""

# zh: 只检查行的最后一维并取它的第一行，[2, H] 被放过
# fails: append_errors

from framework import Tensor, as_tensor
from framework.kv_cache import KVCache


def _row(cache: KVCache, row: Tensor, name: str):
    arr = as_tensor(row, name).numpy()
    if arr.shape[-1] != cache.hidden_dim:
        raise ValueError(f"{name} must end in {cache.hidden_dim}, got shape {arr.shape}")
    return arr.reshape(-1, cache.hidden_dim)[0]
