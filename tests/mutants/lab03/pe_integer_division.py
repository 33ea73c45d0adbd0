"""Mutant: pe_sinusoidal computes the exponent 2i / H with integer division, so every frequency is 1.

For dim < H, 2 * i // hidden_dim is 0: PE(pos, d) = sin(pos) or cos(pos) in every column.
The C course's PE(1, 0) / PE(1, 1) checks could not see it (the divisor there is 1 anyway).
"""

# fails: pe_frequencies, forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck, accepts_arrays

import math


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """sin(pos / 10000^(2i/H)) for dim = 2i, cos(...) for dim = 2i + 1."""
    i = dim // 2
    angle = pos / 10000.0 ** (2 * i // hidden_dim)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)
