"""Mutant: writes the rows but never advances the layer's length."""

# zh: 写入了行，但从不推进这一层的长度
# fails: append_rows, append_forms, end_to_end

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
    return pos
