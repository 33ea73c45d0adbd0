"""Token embedding plus sinusoidal positional encoding: forward and backward.

`Embedding` turns token ids into vectors. It holds two tables: `token_embedding` [V, H]
(one trainable row per token id, zeros until `init_weights`) and `position_embedding`
[max_seq_len, H] (one row per position, filled at creation with the sinusoids of
"Attention Is All You Need", §3.5, and trained like any other parameter afterwards, as in
the C course). Row `pos` of the output is::

    out[pos] = token_embedding[ids[pos]] + position_embedding[pos]

The sinusoids, with i = dim // 2 (so dims 2i and 2i + 1 share one frequency)::

    PE[pos, 2i]     = sin(pos / 10000^(2i / H))
    PE[pos, 2i + 1] = cos(pos / 10000^(2i / H))

For an odd H the last column (dim H - 1, even) is a sine.

The backward pass is a scatter-add: each output row's gradient goes back to the row it was
read from, and a token id that occurs several times collects the sum of its rows
(`np.add.at`, never a plain assignment, which would keep only the last one).

Deliberately not here: an UNK fallback for bad ids (a bad id is a `ValueError`, never a
silent substitute), dropout, weight tying with the output head, learned-only or rotary
position schemes.

Example:
    >>> sinusoidal_table(2, 4)[0].tolist()
    [0.0, 1.0, 0.0, 1.0]
    >>> emb = Embedding(vocab_size=5, hidden_dim=4, max_seq_len=8)
    >>> d_token, d_position = emb.backward([0, 2, 2], np.ones((3, 4), np.float32))
    >>> d_token.numpy()[:3, 0].tolist()  # id 2 appears twice, id 1 never
    [1.0, 0.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.module import Member, Module
from framework.tensor import Tensor, as_tensor, tensor_from, tensor_zeros
from framework.validate import check_rng, positive_int

__all__ = ["PE_BASE", "Embedding", "sinusoidal_table"]

Ids = Sequence[int] | NDArray[np.integer[Any]]

PE_BASE = 10000.0


def sinusoidal_table(max_seq_len: int, hidden_dim: int) -> NDArray[np.float32]:
    """The [max_seq_len, H] table of sinusoidal position encodings (computed in float64).

    Args:
        max_seq_len: number of positions (rows).
        hidden_dim: H, number of columns; may be odd (the last column is then a sine).

    Returns:
        A new float32 array: PE[pos, 2i] = sin(pos / 10000^(2i/H)), PE[pos, 2i+1] = cos(...).

    Raises:
        TypeError: if a size is not an int.
        ValueError: if a size is not positive.

    Example:
        >>> round(float(sinusoidal_table(2, 4)[1, 0]), 6)  # sin(1)
        0.841471
    """
    n = positive_int(max_seq_len, "max_seq_len")
    h = positive_int(hidden_dim, "hidden_dim")
    dims = np.arange(h)  # (H,)
    two_i = (dims // 2 * 2).astype(np.float64)  # (H,) 0, 0, 2, 2, 4, ...
    freq = PE_BASE ** (-two_i / h)  # (H,) 1 / 10000^(2i/H)
    angle = np.arange(n, dtype=np.float64)[:, None] * freq[None, :]  # (maxS, H)
    table = np.where(dims % 2 == 0, np.sin(angle), np.cos(angle))  # (maxS, H)
    return table.astype(np.float32)


class Embedding(Module):
    """Token table [V, H] plus position table [max_seq_len, H]; forward and backward.

    Args:
        vocab_size: V, number of token ids (rows of `token_embedding`).
        hidden_dim: H, the model width.
        max_seq_len: longest sequence `forward` accepts (rows of `position_embedding`).

    Attributes:
        token_embedding: Tensor [V, H], zeros until `init_weights`.
        position_embedding: Tensor [max_seq_len, H], `sinusoidal_table` at creation.
        vocab_size, hidden_dim, max_seq_len: the sizes above.

    Raises:
        TypeError: if a size is not an int.
        ValueError: if a size is not positive.

    Example:
        >>> emb = Embedding(260, 64, 128)
        >>> emb.forward([76, 109]).shape, emb.num_params()
        ((2, 64), 24832)
    """

    no_decay = frozenset({"position_embedding"})

    def __init__(self, vocab_size: int, hidden_dim: int, max_seq_len: int) -> None:
        self.vocab_size = positive_int(vocab_size, "vocab_size")
        self.hidden_dim = positive_int(hidden_dim, "hidden_dim")
        self.max_seq_len = positive_int(max_seq_len, "max_seq_len")
        self.token_embedding = tensor_zeros((self.vocab_size, self.hidden_dim))
        self.position_embedding = tensor_from(sinusoidal_table(self.max_seq_len, self.hidden_dim))

    def _members(self) -> list[tuple[str, Member]]:
        return [
            ("token_embedding", self.token_embedding),
            ("position_embedding", self.position_embedding),
        ]

    def init_weights(self, rng: np.random.Generator, std: float = 0.02) -> None:
        """In place: draw the token table from N(0, std²); the position table is kept.

        Raises:
            TypeError: if `rng` is not a `numpy.random.Generator`.
        """
        check_rng(rng)
        w = self.token_embedding
        w.numpy()[...] = rng.normal(0.0, std, size=w.shape)

    def num_params(self) -> int:
        """V·H + max_seq_len·H (the position table is a parameter too)."""
        return (self.vocab_size + self.max_seq_len) * self.hidden_dim

    def check_ids(self, ids: Any, start_pos: int = 0) -> NDArray[np.int64]:
        """Validate token ids for a sequence starting at `start_pos`; return them as int64.

        Raises:
            TypeError: if `ids` is not a 1-D sequence of ints.
            ValueError: if it is empty, an id is outside [0, vocab_size), or
                start_pos + len(ids) > max_seq_len.
        """
        if isinstance(ids, Tensor | str | bytes) or not isinstance(ids, Sequence | np.ndarray):
            raise TypeError(f"ids must be a sequence of ints, got {type(ids).__name__}")
        arr = np.asarray(ids)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise TypeError(f"ids must be a 1-D sequence of ints, got {arr.dtype} {arr.shape}")
        if arr.size == 0:
            raise ValueError("ids must not be empty")
        if isinstance(start_pos, bool) or not isinstance(start_pos, int) or start_pos < 0:
            raise ValueError(f"start_pos must be an int >= 0, got {start_pos!r}")
        if start_pos + arr.size > self.max_seq_len:
            raise ValueError(
                f"sequence of {arr.size} ids from position {start_pos} needs "
                f"{start_pos + arr.size} positions, but max_seq_len is {self.max_seq_len}"
            )
        bad = np.flatnonzero((arr < 0) | (arr >= self.vocab_size))
        if bad.size:
            k = int(bad[0])
            raise ValueError(
                f"ids[{k}] = {int(arr[k])} is outside [0, {self.vocab_size}) (vocab_size)"
            )
        return arr.astype(np.int64)

    def forward(self, ids: Ids, start_pos: int = 0) -> Tensor:
        """Rows token_embedding[ids[s]] + position_embedding[start_pos + s]; returns [S, H].

        Args:
            ids: S token ids, each in [0, vocab_size).
            start_pos: position of ids[0] (a KV-cached decode continues a sequence).

        Raises:
            TypeError, ValueError: as `check_ids`.
        """
        idx = self.check_ids(ids, start_pos)
        s = idx.size
        tok = self.token_embedding.numpy()[idx]  # (S, H), fancy indexing copies
        pos = self.position_embedding.numpy()[start_pos : start_pos + s]  # (S, H)
        return tensor_from(tok + pos)  # (S, H)

    def backward(self, ids: Ids, grad_out: Any, start_pos: int = 0) -> tuple[Tensor, Tensor]:
        """Gradients of both tables for d(loss)/d(out) = `grad_out` [S, H].

        Returns:
            (d_token [V, H], d_position [max_seq_len, H]), new Tensors. Repeated ids
            accumulate (scatter-add); rows of unused ids and positions are zero.

        Raises:
            TypeError, ValueError: as `check_ids`, or if `grad_out` is not [S, H].
        """
        idx = self.check_ids(ids, start_pos)
        g = as_tensor(grad_out, "grad_out").numpy()
        if g.shape != (idx.size, self.hidden_dim):
            raise ValueError(
                f"grad_out must be [{idx.size}, {self.hidden_dim}] for {idx.size} ids, "
                f"got shape {g.shape}"
            )
        d_token = tensor_zeros((self.vocab_size, self.hidden_dim))
        np.add.at(d_token.numpy(), idx, g)  # (V, H) += rows of (S, H), repeats add up
        d_position = tensor_zeros((self.max_seq_len, self.hidden_dim))
        d_position.numpy()[start_pos : start_pos + idx.size] += g  # (S, H) rows, no repeats
        return d_token, d_position
