"""Mutant: pe_sinusoidal computes the exponent 2i / H with integer division, so every frequency is 1.

For dim < H, 2 * i // hidden_dim is 0: PE(pos, d) = sin(pos) or cos(pos) in every column.
The C course's PE(1, 0) / PE(1, 1) checks could not see it (the divisor there is 1 anyway).
"""

# zh: 指数 2i / H 用了整数除法 //，所有频率都成了 1
# fails: pe_frequencies, forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck

import math


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """sin(pos / 10000^(2i/H)) for dim = 2i, cos(...) for dim = 2i + 1."""
    i = dim // 2
    angle = pos / 10000.0 ** (2 * i // hidden_dim)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)
