"""Lab11 — the KV cache: keep every layer's keys and values so decoding is one token a step.

    prefill: forward(prompt)           writes K, V rows 0 … P-1 of every layer
    decode:  forward([tok], start=P)   writes row P, attends over rows 0 … P

Without a cache, each new token runs the whole sequence through the model again. With one,
the keys and values of earlier positions are read back instead of recomputed. Here you
write the cache's three basic operations on the framework's `KVCache`:

    cache.k, cache.v   Tensors [num_layers, max_seq_len, hidden_dim], zeros at first
    cache.lengths      list of num_layers ints: rows filled in each layer

`cache.k.numpy()` is a writable view of the keys: `cache.k.numpy()[layer, pos] = row`
writes one row in place. Run `make test` in this folder after every change; `TASK.md`
explains each function. You may use numpy, `as_tensor` and the `KVCache` constructor, but
not `KVCache.append` or `KVCache.length`: the point is to write them.
"""

from __future__ import annotations

from framework import Tensor, as_tensor  # noqa: F401
from framework.kv_cache import KVCache


def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> KVCache:
    """A new, empty cache: K and V of [num_layers, max_seq_len, hidden_dim], all zeros.

    Args:
        num_layers: L, one slot per Transformer block.
        max_seq_len: S, positions per layer.
        hidden_dim: H, width of one key or value row (all heads side by side).

    Returns:
        A framework `KVCache` whose `lengths` are all 0.

    Raises:
        ValueError: if a size is not positive. TypeError: if a size is not an int.
    """
    # BEGIN SOLUTION: build the framework's KVCache with the sizes in the right order.
    return KVCache(num_layers, max_seq_len, hidden_dim)  # it checks the sizes itself
    # END SOLUTION


# BEGIN SOLUTION
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


# END SOLUTION


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    """Write one key row and one value row at the next free position of `layer`.

    Args:
        cache: the cache, changed in place.
        layer: which layer, 0 <= layer < num_layers.
        k_row, v_row: shape [H] or [1, H] (Tensor or numpy array); not modified.

    Returns:
        The position written: the layer's length before the call.

    Raises:
        ValueError: if layer is out of range, a row does not hold H numbers, or the layer
            is full. In every error case the cache is left exactly as it was.
    """
    # BEGIN SOLUTION: check everything first, then write both rows and advance the length.
    layer = _layer(cache, layer)
    k, v = _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")  # check both first
    pos = cache.lengths[layer]
    if pos >= cache.max_seq_len:
        raise ValueError(f"layer {layer} is full ({cache.max_seq_len} positions)")
    cache.k.numpy()[layer, pos] = k  # a view: writes into the cache's storage
    cache.v.numpy()[layer, pos] = v
    cache.lengths[layer] = pos + 1
    return pos
    # END SOLUTION


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    """Positions filled in `layer`; with None, in every layer (the minimum over layers).

    Raises:
        ValueError: if layer is out of range.
    """
    # BEGIN SOLUTION: read cache.lengths.
    if layer is None:
        return min(cache.lengths)
    return cache.lengths[_layer(cache, layer)]
    # END SOLUTION
