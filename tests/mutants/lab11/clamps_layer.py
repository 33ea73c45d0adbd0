"""Mutant: clamps an out-of-range layer into [0, L) instead of refusing it."""

# zh: 越界的 layer 被夹到 [0, L) 里，而不是拒绝
# fails: append_errors, len_per_layer

from framework.kv_cache import KVCache


def _layer(cache: KVCache, layer: int) -> int:
    return min(max(int(layer), 0), cache.num_layers - 1)
