"""Mutant: advances the layer's length before writing, so a bad row leaves it advanced."""

# zh: 先推进长度再写入，行不对时长度已经加过了
# fails: append_errors

from framework import Tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    layer = _layer(cache, layer)
    pos = cache.lengths[layer]
    if pos >= cache.max_seq_len:
        raise ValueError("full")
    cache.lengths[layer] = pos + 1
    k, v = _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")
    cache.k.numpy()[layer, pos] = k
    cache.v.numpy()[layer, pos] = v
    return pos
