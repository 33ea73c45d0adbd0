"""Lab11, written by following the handout's hints word for word (tested to pass)."""

from __future__ import annotations

from framework import Tensor, as_tensor
from framework.kv_cache import KVCache


def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> KVCache:
    return KVCache(num_layers, max_seq_len, hidden_dim)


def _check_layer(cache: KVCache, layer: int) -> None:
    if not 0 <= layer < cache.num_layers:
        raise ValueError(f"layer must be in [0, {cache.num_layers}), got {layer}")


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    _check_layer(cache, layer)
    h = cache.hidden_dim
    k = as_tensor(k_row, "k_row").numpy()
    v = as_tensor(v_row, "v_row").numpy()
    for name, row in (("k_row", k), ("v_row", v)):
        if row.shape not in ((h,), (1, h)):
            raise ValueError(f"{name} must be [{h}] or [1, {h}], got {row.shape}")
    pos = cache.lengths[layer]
    if pos >= cache.max_seq_len:
        raise ValueError(f"layer {layer} is full")
    cache.k.numpy()[layer, pos] = k.reshape(h)
    cache.v.numpy()[layer, pos] = v.reshape(h)
    cache.lengths[layer] = pos + 1
    return pos


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    if layer is None:
        return min(cache.lengths)
    _check_layer(cache, layer)
    return cache.lengths[layer]
