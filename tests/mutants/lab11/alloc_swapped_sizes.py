"""Mutant: passes the sizes in the wrong order (S, L, H): the byte count is still right."""

# zh: 大小的顺序传错了（S, L, H）：字节数仍然对
# fails: alloc_shapes, end_to_end

from framework.kv_cache import KVCache


def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> KVCache:
    return KVCache(max_seq_len, num_layers, hidden_dim)
