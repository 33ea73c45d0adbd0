"""Mutant: indexes cache.lengths directly, so layer 3 raises IndexError and -1 is accepted."""

# fails: len_per_layer

from framework.kv_cache import KVCache


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    if layer is None:
        return min(cache.lengths)
    return cache.lengths[layer]
