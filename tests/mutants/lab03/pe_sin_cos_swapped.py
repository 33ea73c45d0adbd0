"""Mutant: pe_sinusoidal puts cos in the even dims and sin in the odd ones.

Position 0 then reads [1, 0, 1, 0, ...] instead of [0, 1, 0, 1, ...].
"""

# zh: sin 和 cos 放反了：偶数维用了 cos，奇数维用了 sin
# fails: pe_position_zero, pe_frequencies, forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck

import math


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """sin(pos / 10000^(2i/H)) for dim = 2i, cos(...) for dim = 2i + 1."""
    i = dim // 2
    angle = pos / 10000.0 ** (2 * i / hidden_dim)  # float division: 2i/H is a fraction
    return math.cos(angle) if dim % 2 == 0 else math.sin(angle)
