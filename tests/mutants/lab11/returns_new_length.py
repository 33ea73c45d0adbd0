"""Mutant: returns the new length (pos + 1) instead of the position written."""

# zh: 返回新的长度（pos + 1），而不是写入的位置
# fails: append_rows, append_forms

from framework import Tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    layer = _layer(cache, layer)
    k, v = _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")
    pos = cache.lengths[layer]
    if pos >= cache.max_seq_len:
        raise ValueError("full")
    cache.k.numpy()[layer, pos] = k
    cache.v.numpy()[layer, pos] = v
    cache.lengths[layer] = pos + 1
    return pos + 1
