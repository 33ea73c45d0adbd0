"""Mutant: pe_sinusoidal uses dim instead of 2i in the exponent, so odd dims get the next frequency.

Even dims are unaffected (dim = 2i there); the odd-dim probes catch it.
"""

# zh: 指数里用了 dim 而不是 2i，奇数维拿到下一个频率
# fails: pe_position_zero, pe_frequencies, forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck

import math


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """sin(pos / 10000^(2i/H)) for dim = 2i, cos(...) for dim = 2i + 1."""
    angle = pos / 10000.0 ** (dim / hidden_dim)  # dim, not 2i = 2·(dim // 2)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)
