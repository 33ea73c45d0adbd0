"""Many seeded generators at once: ``default_rng([*prefix, i])`` for i < n, built fast.

A seeded sweep (`Session.map_seeded`) hands each call a generator of its own. Building one
with ``numpy.random.default_rng(entropy)`` costs about 16 µs, most of it `SeedSequence`
hashing the entropy one row at a time: for lab08's 30,000 draws that is half a second
per run. `generators` hashes all n rows in one pass of array arithmetic, then gives each
PCG64 its seed through a `SeedSequence` stand-in that returns the precomputed state
(about 2 µs a generator). Each generator is a fresh object in exactly the state
``default_rng([*prefix, i])`` would have (`tests/test_seeding.py` compares them).

The hashing is numpy's `SeedSequence` (O'Neill's randutils ``seed_seq_fe``, pool size 4)
on uint32 arrays: its constants below are numpy's, and its hash constants depend only on
how many words were hashed, never on their values, so n rows hash side by side.

A leaf module (numpy only).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence
from numpy.typing import NDArray

Words = NDArray[np.uint32]  # (n,): one uint32 word of each of n rows

__all__ = ["generators", "seed_states"]

_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875  # mixing the entropy into the pool
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED  # drawing the state from the pool
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4  # uint32 words of the pool (numpy's default)
_MASK = 0xFFFFFFFF
_SHIFT = np.uint32(16)


def _words(value: int) -> list[int]:
    """An entropy integer as uint32 words, least significant first (0 is one word)."""
    out = [value & _MASK]
    value >>= 32
    while value:
        out.append(value & _MASK)
        value >>= 32
    return out


class _Mixer:
    """The running hash constant of one pass; it advances with each word hashed."""

    def __init__(self, start: int, mult: int) -> None:
        self.const, self.mult = start, mult

    def hash(self, value: Words) -> Words:
        mixed: Words = value ^ np.uint32(self.const)
        self.const = (self.const * self.mult) & _MASK
        mixed = mixed * np.uint32(self.const)
        return mixed ^ (mixed >> _SHIFT)


def _mix(x: Words, y: Words) -> Words:
    result: Words = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
    return result ^ (result >> _SHIFT)


def seed_states(prefix: Sequence[int], n: int) -> NDArray[np.uint64]:
    """``SeedSequence([*prefix, i]).generate_state(4, np.uint64)`` for i < n, as (n, 4).

    `prefix`: non-negative ints (each any size); `n` at most 2**32 (each i is one word).
    """
    columns = [np.full(n, w, np.uint32) for v in prefix for w in _words(int(v))]
    columns.append(np.arange(n, dtype=np.uint32))  # (n,): the last entropy word, i
    a = _Mixer(_INIT_A, _MULT_A)
    zero = np.zeros(n, np.uint32)
    pool = [a.hash(columns[k] if k < len(columns) else zero) for k in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], a.hash(pool[src]))
    for src in range(_POOL, len(columns)):
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], a.hash(columns[src]))
    b = _Mixer(_INIT_B, _MULT_B)
    words = np.empty((n, 8), np.dtype("<u4"))  # (n, 8): little-endian pairs of uint64
    for k in range(8):
        words[:, k] = b.hash(pool[k % _POOL])
    return words.view("<u8").astype(np.uint64)  # (n, 4)


class _Given(ISeedSequence):
    """A seed sequence whose state is already known (what PCG64 asks of one)."""

    __slots__ = ("state",)

    def __init__(self, state: NDArray[np.uint64]) -> None:
        self.state = state

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> NDArray[np.uint64]:
        if n_words != 4 or np.dtype(dtype) != np.uint64:  # not what PCG64 asks: refuse
            raise ValueError("a precomputed PCG64 seed is 4 uint64 words")
        return self.state


def generators(prefix: Sequence[int], n: int) -> Iterator[np.random.Generator]:
    """A fresh ``default_rng([*prefix, i])`` for each i < n, in order."""
    states = seed_states(prefix, n)
    for row in states:
        seed: Any = _Given(row)  # an ISeedSequence, which PCG64 takes (its stub says less)
        yield np.random.Generator(np.random.PCG64(seed))
