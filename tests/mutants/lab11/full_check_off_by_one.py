"""Mutant: the full check is pos > max_seq_len, so a full layer raises IndexError."""

# zh: 已满的判断写成 pos > max_seq_len，满了的层抛出 IndexError
# fails: append_errors

from framework import Tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    layer = _layer(cache, layer)
    k, v = _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")
    pos = cache.lengths[layer]
    if pos > cache.max_seq_len:
        raise ValueError("full")
    cache.k.numpy()[layer, pos] = k
    cache.v.numpy()[layer, pos] = v
    cache.lengths[layer] = pos + 1
    return pos
