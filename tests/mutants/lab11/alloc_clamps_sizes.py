"""Mutant: turns a non-positive size into 1 instead of refusing it."""

# zh: 把不是正数的大小改成 1，而不是拒绝它
# fails: alloc_errors

from framework.kv_cache import KVCache


def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> KVCache:
    return KVCache(*(max(1, int(n)) for n in (num_layers, max_seq_len, hidden_dim)))
