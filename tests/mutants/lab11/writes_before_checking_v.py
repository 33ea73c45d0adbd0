"""Mutant: writes the key row, then finds the value row wrong: the cache is half-changed."""

# zh: 先写了 K 行才发现 V 行不对：缓存被改了一半
# fails: append_errors

from framework import Tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    layer = _layer(cache, layer)
    pos = cache.lengths[layer]
    if pos >= cache.max_seq_len:
        raise ValueError("full")
    cache.k.numpy()[layer, pos] = _row(cache, k_row, "k_row")
    cache.v.numpy()[layer, pos] = _row(cache, v_row, "v_row")
    cache.lengths[layer] = pos + 1
    return pos
