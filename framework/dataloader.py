"""Batches of training windows from one long token stream.

A language model learns from (input, target) pairs in which the target is the input
shifted by one token: window ``tokens[s : s + T + 1]`` gives ``x = window[:-1]`` and
``y = window[1:]``. `WindowLoader` draws B random start positions per batch from its own
seeded `numpy.random.Generator` (anywhere, or only at given positions such as the start of
each dialogue), so the same seed always gives the same batches, and its
generator state can be saved and restored to resume a run exactly. `eval_windows` covers
a held-out stream with fixed, non-overlapping windows, so that validation losses of
different steps and runs compare like with like.

The C course's loader cut the corpus into non-overlapping windows and shuffled them each
epoch (and read past the end of a corpus shorter than one window); random starts see
every offset of every dialogue, and a too-short stream is an error here. Deliberately
not here: tokenizing (see `framework.corpus.encode_dialogues`), padding, epochs.

Example:
    >>> loader = WindowLoader(np.arange(10), batch_size=2, seq_len=3, seed=0)
    >>> x, y = loader.next_batch()
    >>> x.shape, bool((y[:, :-1] == x[:, 1:]).all())
    ((2, 3), True)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["WindowLoader", "eval_windows"]

Ids = NDArray[np.int64]


def _stream(tokens: Any, seq_len: int) -> Ids:
    arr = np.asarray(tokens)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"tokens must be a 1-D integer array, got {arr.dtype} {arr.shape}")
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len < 1:
        raise ValueError(f"seq_len must be a positive int, got {seq_len!r}")
    if arr.size < seq_len + 1:
        raise ValueError(
            f"a window needs seq_len + 1 = {seq_len + 1} tokens, the stream has {arr.size}"
        )
    return arr.astype(np.int64, copy=False)


class WindowLoader:
    """Random (x, y) windows of `seq_len` tokens, `batch_size` per batch.

    Args:
        tokens: the token stream, a 1-D integer array of at least seq_len + 1 ids.
        batch_size: B, windows per batch.
        seq_len: T, tokens per window.
        seed: seeds this loader's own generator.
        starts: if given, windows start only at these positions (e.g. where each dialogue
            begins, so that no window opens in the middle of a question); positions too
            close to the end for a whole window are dropped.

    Raises:
        ValueError: for a non-positive size or a stream shorter than one window.
        TypeError: if `tokens` is not a 1-D integer array.
    """

    def __init__(
        self, tokens: Any, batch_size: int, seq_len: int, seed: int = 0, starts: Any = None
    ) -> None:
        self.tokens = _stream(tokens, seq_len)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.batch_size, self.seq_len = batch_size, seq_len
        self.rng = np.random.default_rng(seed)
        self._offsets = np.arange(seq_len + 1)  # (T + 1,)
        last = self.tokens.size - seq_len - 1  # the last start whose window fits
        if starts is None:
            self.starts: Ids | None = None
        else:
            allowed = np.unique(np.asarray(starts, dtype=np.int64))
            self.starts = allowed[(allowed >= 0) & (allowed <= last)]
            if self.starts.size == 0:
                raise ValueError(f"no start in `starts` leaves room for a window of {seq_len}")

    def next_batch(self) -> tuple[Ids, Ids]:
        """The next batch: x and y of shape [B, T], y[b, i] == x[b, i + 1] for i < T - 1.

        Returns:
            (x, y), two new int64 arrays.
        """
        if self.starts is None:
            starts = self.rng.integers(0, self.tokens.size - self.seq_len, size=self.batch_size)
        else:
            starts = self.starts[self.rng.integers(0, self.starts.size, size=self.batch_size)]
        windows = self.tokens[starts[:, None] + self._offsets]  # (B, T + 1)
        return windows[:, :-1], windows[:, 1:]  # (B, T), (B, T)

    def state(self) -> dict[str, Any]:
        """The generator's state (a JSON-able dict), for `set_state` when resuming."""
        return dict(self.rng.bit_generator.state)

    def set_state(self, state: dict[str, Any]) -> None:
        """Continue from a state returned by `state`."""
        self.rng.bit_generator.state = state


def eval_windows(
    tokens: Any,
    batch_size: int,
    seq_len: int,
    max_batches: int | None = None,
    starts: Any = None,
) -> Iterator[tuple[Ids, Ids]]:
    """Fixed (x, y) windows of a held-out stream, in batches, the same every time.

    Args:
        tokens: the held-out stream.
        batch_size: windows per batch (the last batch may be smaller).
        seq_len: tokens per window.
        max_batches: stop after this many batches (None: cover the stream).
        starts: if given, the windows start at these positions, in order (those that
            leave room for a window); else they tile the stream from its start.

    Yields:
        (x, y) pairs of shape [b, T].

    Example:
        >>> [x.tolist() for x, _ in eval_windows(np.arange(7), 2, 3)]
        [[[0, 1, 2], [3, 4, 5]]]
        >>> [x.tolist() for x, _ in eval_windows(np.arange(7), 2, 3, starts=[1, 5])]
        [[[1, 2, 3]]]
    """
    stream = _stream(tokens, seq_len)
    if starts is None:
        first = np.arange((stream.size - 1) // seq_len) * seq_len  # (n,)
    else:
        first = np.asarray(starts, dtype=np.int64)
        first = first[(first >= 0) & (first <= stream.size - seq_len - 1)]
    if max_batches is not None:
        first = first[: max_batches * batch_size]
    offsets = np.arange(seq_len + 1)  # (T + 1,)
    for i in range(0, first.size, batch_size):
        windows = stream[first[i : i + batch_size, None] + offsets]  # (b, T + 1)
        yield windows[:, :-1], windows[:, 1:]
