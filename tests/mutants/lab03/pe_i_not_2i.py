"""Mutant: pe_sinusoidal uses i instead of 2i in the exponent (frequencies decay half as fast).

A misreading of PE[pos, 2i] = sin(pos / 10000^(2i/H)) as 10000^(i/H).
"""

# zh: 指数里用了 i 而不是 2i（10000^(i/H)）
# fails: pe_frequencies, forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck

import math


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """sin(pos / 10000^(2i/H)) for dim = 2i, cos(...) for dim = 2i + 1."""
    i = dim // 2
    angle = pos / 10000.0 ** (i / hidden_dim)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)
