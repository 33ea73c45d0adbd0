"""Mutant: one position for all layers (the longest layer's length), as the C course's
current_len."""

# zh: 所有层共用一个位置（最长那一层的长度），像 C 版的 current_len
# fails: append_rows, end_to_end

from framework import Tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    layer = _layer(cache, layer)
    k, v = _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")
    pos = max(cache.lengths)
    if pos >= cache.max_seq_len:
        raise ValueError("full")
    cache.k.numpy()[layer, pos] = k
    cache.v.numpy()[layer, pos] = v
    cache.lengths[layer] = pos + 1
    return pos
