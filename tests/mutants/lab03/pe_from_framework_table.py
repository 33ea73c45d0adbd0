"""Mutant: pe_sinusoidal reads the framework's sinusoidal table instead of computing it."""

# zh: pe_sinusoidal 读框架的正弦表，没有自己算
# fails: pe_position_zero, pe_frequencies, forward_values, forward_distinguishes, forward_own_pe, forward_errors, backward_gradcheck, accepts_arrays

from framework.embedding import sinusoidal_table


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """sin(pos / 10000^(2i/H)) for dim = 2i, cos(...) for dim = 2i + 1."""
    return float(sinusoidal_table(pos + 1, hidden_dim)[pos, dim])
