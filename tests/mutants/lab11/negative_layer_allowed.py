"""Mutant: checks only layer < num_layers, so layer -1 writes the last layer."""

# zh: 只检查 layer < num_layers，layer = -1 写进了最后一层
# fails: append_errors, len_per_layer

from framework.kv_cache import KVCache


def _layer(cache: KVCache, layer: int) -> int:
    if layer >= cache.num_layers:
        raise ValueError(f"layer must be < {cache.num_layers}, got {layer}")
    return layer
