"""What decoding one message may cost the decoder's process: the `Budget`.

The grader decodes every reply of a sandbox child, whose contents the student's code
controls, within a budget; `grader.codec.frame` checks the byte sizes before anything is
parsed and `grader.codec.decode` charges the rest while it builds values. This module only
says how much; it charges nothing itself. The idea is the one of a decompression bomb
guard: bound what a small input may make the reader allocate, not just its own size.

Example:
    >>> Budget(seconds=0.5).elements == DEFAULT_BUDGET.elements
    True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_BUDGET", "Budget"]


@dataclass(frozen=True)
class Budget:
    """What one decoded message may cost the decoder's process.

    Every array and Tensor counts its logical elements (a zero-stride view over 4 bytes that
    claims 2**29 elements counts 2**29: the grader would materialise it when comparing), and
    every reference to a blob counts again. The frame and its JSON part are bounded before
    anything is parsed: eight million ``[]`` in JSON are eight million list objects before
    any other budget is consulted. Exceeding any field raises `CodecError`.
    """

    frame: int = 192 * 1024 * 1024  # bytes of one reply frame, read before it is decoded
    json: int = 16 * 1024 * 1024  # bytes of its JSON part (parsing costs ~20x in objects)
    elements: int = 32 * 1024 * 1024  # array/Tensor elements in all (128 MiB of float32)
    items: int = 1_000_000  # list, tuple and dict entries in all
    dict_size: int = 2048  # entries of one dict (bounds the cost of colliding key hashes)
    string: int = 4 * 1024 * 1024  # characters of one string
    int_digits: int = 400  # decimal digits of one integer
    seconds: float = 5.0  # wall time for the whole decode


DEFAULT_BUDGET = Budget()
