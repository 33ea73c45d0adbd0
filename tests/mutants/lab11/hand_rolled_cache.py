"""Mutant: a cache class of its own with k, v and lengths, not the framework's KVCache."""

# zh: 自己写了一个有 k、v、lengths 的缓存类，不是框架的 KVCache
# fails: alloc_shapes, alloc_memory, end_to_end

import numpy as np


class Cache:
    def __init__(self, num_layers: int, max_seq_len: int, hidden_dim: int) -> None:
        self.num_layers, self.max_seq_len, self.hidden_dim = num_layers, max_seq_len, hidden_dim
        self.k = np.zeros((num_layers, max_seq_len, hidden_dim), np.float32)
        self.v = np.zeros((num_layers, max_seq_len, hidden_dim), np.float32)
        self.lengths = [0] * num_layers


def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> Cache:
    if min(num_layers, max_seq_len, hidden_dim) <= 0:
        raise ValueError("sizes must be positive")
    return Cache(num_layers, max_seq_len, hidden_dim)
