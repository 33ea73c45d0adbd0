"""Mutant: indexes cache.lengths directly, so layer 3 raises IndexError and -1 is accepted."""

# zh: 直接用 layer 索引 cache.lengths：layer 3 抛 IndexError，-1 被接受
# fails: len_per_layer

from framework.kv_cache import KVCache


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    if layer is None:
        return min(cache.lengths)
    return cache.lengths[layer]
