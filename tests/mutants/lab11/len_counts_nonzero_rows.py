"""Mutant: counts the non-zero rows of K instead of reading the lengths."""

# zh: 数 K 里非零的行，而不是读 lengths
# fails: len_per_layer

import numpy as np

from framework.kv_cache import KVCache


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    filled = [int(np.any(cache.k.numpy()[i] != 0, axis=1).sum()) for i in range(cache.num_layers)]
    if layer is None:
        return min(filled)
    return filled[_layer(cache, layer)]
