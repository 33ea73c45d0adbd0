"""Mutant: allocates one spare position per layer "to be safe"."""

# zh: 为了“保险”每层多分配了一个位置
# fails: alloc_shapes, alloc_memory

from framework.kv_cache import KVCache


def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> KVCache:
    return KVCache(num_layers, max_seq_len + 1, hidden_dim)
