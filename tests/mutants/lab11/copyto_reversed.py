"""Mutant: np.copyto with its arguments swapped copies the empty cache row into the inputs."""

# zh: np.copyto 的两个参数写反了：把缓存里的空行复制进了输入
# fails: append_rows, append_forms, end_to_end

import numpy as np

from framework import Tensor, as_tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    layer = _layer(cache, layer)
    _row(cache, k_row, "k_row"), _row(cache, v_row, "v_row")
    pos = cache.lengths[layer]
    if pos >= cache.max_seq_len:
        raise ValueError("full")
    k = as_tensor(k_row, "k_row").numpy().reshape(cache.hidden_dim)
    v = as_tensor(v_row, "v_row").numpy().reshape(cache.hidden_dim)
    np.copyto(k, cache.k.numpy()[layer, pos])
    np.copyto(v, cache.v.numpy()[layer, pos])
    cache.lengths[layer] = pos + 1
    return pos
