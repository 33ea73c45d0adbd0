"""Mutant: pe_sinusoidal uses base 1000 instead of 10000 (a dropped zero).

Dims 0 and 1 are unaffected (10000^0 = 1000^0 = 1); higher dims are not.
"""

# zh: 底数写成 1000，不是 10000
# fails: pe_frequencies, forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck

import math


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """sin(pos / 10000^(2i/H)) for dim = 2i, cos(...) for dim = 2i + 1."""
    i = dim // 2
    angle = pos / 1000.0 ** (2 * i / hidden_dim)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)
