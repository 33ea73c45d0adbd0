"""Mutant: writes the key row into V and the value row into K."""

# zh: 把 K 行写进了 V，把 V 行写进了 K
# fails: append_rows, append_forms, end_to_end

from framework import Tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    layer = _layer(cache, layer)
    k, v = _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")
    pos = cache.lengths[layer]
    if pos >= cache.max_seq_len:
        raise ValueError("full")
    cache.k.numpy()[layer, pos] = v
    cache.v.numpy()[layer, pos] = k
    cache.lengths[layer] = pos + 1
    return pos
