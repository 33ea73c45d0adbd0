"""Mutant: when a layer is full it overwrites the last position instead of refusing."""

# zh: 一层满了以后覆盖最后一个位置，而不是拒绝
# fails: append_errors

from framework import Tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    layer = _layer(cache, layer)
    k, v = _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")
    pos = min(cache.lengths[layer], cache.max_seq_len - 1)
    cache.k.numpy()[layer, pos] = k
    cache.v.numpy()[layer, pos] = v
    cache.lengths[layer] = pos + 1
    return pos
