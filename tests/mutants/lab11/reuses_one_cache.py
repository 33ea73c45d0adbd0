"""Mutant: keeps one cache per size in a module global and hands it out again."""

# zh: 按大小把缓存存在模块级变量里，再次分配时交出同一个
# fails: alloc_shapes, alloc_errors

from framework.kv_cache import KVCache

_CACHES: dict[tuple[int, int, int], KVCache] = {}


def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> KVCache:
    key = (num_layers, max_seq_len, hidden_dim)
    if key not in _CACHES:
        _CACHES[key] = KVCache(*key)
    return _CACHES[key]
