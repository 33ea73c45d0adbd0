"""Mutant: no checks of its own; relies on numpy's indexing and assignment to complain."""

# zh: 自己不做任何检查，指望 numpy 的索引和赋值来报错
# fails: append_errors

from framework import Tensor, as_tensor
from framework.kv_cache import KVCache


def kv_cache_append(cache: KVCache, layer: int, k_row: Tensor, v_row: Tensor) -> int:
    pos = cache.lengths[layer]
    cache.k.numpy()[layer, pos] = as_tensor(k_row, "k_row").numpy()
    cache.v.numpy()[layer, pos] = as_tensor(v_row, "v_row").numpy()
    cache.lengths[layer] = pos + 1
    return pos
