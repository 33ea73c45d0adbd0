"""Mutant: with layer None, returns the longest layer instead of the shortest."""

# zh: layer 为 None 时返回最长的一层，而不是最短的
# fails: len_per_layer

from framework.kv_cache import KVCache


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    if layer is None:
        return max(cache.lengths)
    return cache.lengths[_layer(cache, layer)]
