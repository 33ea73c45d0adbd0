"""The KV cache for generation: every layer's keys and values of the positions seen so far.

Decoding one token at a time would otherwise recompute K and V for the whole prefix at
every step. `KVCache` keeps them: `k` and `v` are Tensors [L, max_seq_len, H] (zeros at
first), and `lengths[l]` says how many rows of layer l are filled. `append` adds one row to
one layer (what lab11 writes); `GPTModel.forward(ids, kv_cache=cache, start_pos=p)` writes
rows p…p+S−1 of every layer itself and attends over rows 0…p+S−1.

Every error leaves the cache exactly as it was.

Not here: paged or sliding-window caches, batching several sequences, eviction.

Example:
    >>> cache = KVCache(num_layers=2, max_seq_len=4, hidden_dim=3)
    >>> cache.append(0, [1.0, 2.0, 3.0], [0.0, 0.0, 1.0])
    0
    >>> cache.lengths, cache.length(0), cache.length()
    ([1, 0], 1, 0)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.module import array_of
from framework.tensor import as_tensor, tensor_zeros
from framework.validate import is_int, positive_int

__all__ = ["KVCache"]


class KVCache:
    """Keys and values per layer and position, with a fill length per layer.

    Args:
        num_layers: L, one slot per Transformer block.
        max_seq_len: positions per layer.
        hidden_dim: H, width of a key/value row (all heads side by side).

    Attributes:
        k, v: Tensors [L, max_seq_len, H].
        lengths: list of L ints, filled rows per layer.
        num_layers, max_seq_len, hidden_dim: the sizes above.

    Raises:
        TypeError: if a size is not an int.
        ValueError: if a size is not positive.

    Example:
        >>> KVCache(4, 128, 64).nbytes
        262144
    """

    def __init__(self, num_layers: int, max_seq_len: int, hidden_dim: int) -> None:
        self.num_layers = positive_int(num_layers, "num_layers")
        self.max_seq_len = positive_int(max_seq_len, "max_seq_len")
        self.hidden_dim = positive_int(hidden_dim, "hidden_dim")
        shape = (self.num_layers, self.max_seq_len, self.hidden_dim)
        self.k = tensor_zeros(shape)
        self.v = tensor_zeros(shape)
        self.lengths: list[int] = [0] * self.num_layers

    @property
    def nbytes(self) -> int:
        """Bytes held by `k` and `v` together."""
        return int(self.k.data.nbytes + self.v.data.nbytes)

    def _check_layer(self, layer: Any) -> int:
        if not is_int(layer):
            raise TypeError(f"layer must be an int, got {type(layer).__name__} {layer!r}")
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in [0, {self.num_layers}), got {layer}")
        return int(layer)

    def _row(self, row: Any, name: str) -> NDArray[np.float32]:
        arr = as_tensor(row, name).numpy()
        if arr.shape not in ((self.hidden_dim,), (1, self.hidden_dim)):
            h = self.hidden_dim
            raise ValueError(f"{name} must be [{h}] or [1, {h}], got shape {arr.shape}")
        return arr.reshape(self.hidden_dim)

    def append(self, layer: int, k_row: Any, v_row: Any) -> int:
        """Write one key row and one value row at the next free position of `layer`.

        Args:
            layer: which layer, 0 <= layer < num_layers.
            k_row, v_row: Tensor or array of shape [H] or [1, H].

        Returns:
            The position written (the layer's length before the call).

        Raises:
            TypeError: if `layer` is not an int or a row is not numeric.
            ValueError: if `layer` is out of range, a row has the wrong length, or the
                layer is full. The cache is unchanged in every error case.
        """
        idx = self._check_layer(layer)
        k, v = self._row(k_row, "k_row"), self._row(v_row, "v_row")
        pos = self.lengths[idx]
        if pos >= self.max_seq_len:
            raise ValueError(f"layer {idx} of the KV cache is full ({self.max_seq_len} positions)")
        array_of(self.k)[idx, pos] = k
        array_of(self.v)[idx, pos] = v
        self.lengths[idx] = pos + 1
        return pos

    def length(self, layer: int | None = None) -> int:
        """Filled positions of `layer`, or with None the minimum over all layers.

        Raises:
            TypeError, ValueError: for a `layer` that is not an int in range.
        """
        if layer is None:
            return min(self.lengths)
        return self.lengths[self._check_layer(layer)]

    def reset(self) -> None:
        """Empty every layer (lengths 0, keys and values zeroed)."""
        array_of(self.k)[...] = 0.0
        array_of(self.v)[...] = 0.0
        self.lengths = [0] * self.num_layers

    def check_room(self, start_pos: int, count: int) -> None:
        """Raise unless `count` rows can be written from `start_pos` in every layer.

        Writing may start at any filled length or earlier (rewinding drops later rows),
        never after it: a gap would attend over rows nobody wrote.

        Raises:
            ValueError: if a layer holds fewer than `start_pos` rows or the rows do not fit.
        """
        if start_pos + count > self.max_seq_len:
            raise ValueError(
                f"positions {start_pos}…{start_pos + count - 1} do not fit in a KV cache of "
                f"max_seq_len {self.max_seq_len}"
            )
        short = [i for i, n in enumerate(self.lengths) if n < start_pos]
        if short:
            raise ValueError(
                f"start_pos is {start_pos} but layer {short[0]} of the KV cache holds only "
                f"{self.lengths[short[0]]} positions"
            )
