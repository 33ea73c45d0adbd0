"""Mutant: counts its own appends in an attribute instead of reading cache.lengths."""

# zh: 用自己的属性数追加次数，而不是读 cache.lengths
# fails: len_per_layer, end_to_end

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
    counts = cache.__dict__.setdefault("appended", [0] * cache.num_layers)
    counts[layer] += 1
    return pos


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    counts = cache.__dict__.get("appended", [0] * cache.num_layers)
    if layer is None:
        return min(counts)
    return counts[_layer(cache, layer)]
