"""Lab11 with one position for every layer, as the C course's current_len."""

from __future__ import annotations

from framework import Tensor, as_tensor
from framework.kv_cache import KVCache


def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> KVCache:
    """A new, empty cache: K and V of [num_layers, max_seq_len, hidden_dim], all zeros."""
    return KVCache(num_layers, max_seq_len, hidden_dim)  # it checks the sizes itself


def _layer(cache: KVCache, layer: int) -> int:
    if isinstance(layer, bool) or not isinstance(layer, int):
        raise TypeError(f"layer must be an int, got {type(layer).__name__}")
    if not 0 <= layer < cache.num_layers:
        raise ValueError(f"layer must be in [0, {cache.num_layers}), got {layer}")
    return layer


def _row(cache: KVCache, row: Tensor, name: str):
    arr = as_tensor(row, name).numpy()
    if arr.shape not in ((cache.hidden_dim,), (1, cache.hidden_dim)):
        raise ValueError(f"{name} must be [{cache.hidden_dim}] or [1, {cache.hidden_dim}], "
                         f"got shape {arr.shape}")  # fmt: skip
    return arr.reshape(cache.hidden_dim)


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    """Write one key row and one value row at the next free position of `layer`."""
    layer = _layer(cache, layer)
    k, v = _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")  # check both first
    pos = max(cache.lengths)  # one counter for the whole cache
    if pos >= cache.max_seq_len:
        raise ValueError(f"layer {layer} is full ({cache.max_seq_len} positions)")
    cache.k.numpy()[layer, pos] = k  # a view: writes into the cache's storage
    cache.v.numpy()[layer, pos] = v
    cache.lengths[layer] = pos + 1
    return pos


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    """Positions filled in `layer`; with None, the minimum over all layers."""
    if layer is None:
        return min(cache.lengths)
    return cache.lengths[_layer(cache, layer)]
