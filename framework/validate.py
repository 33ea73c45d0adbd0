"""Argument checks shared by every framework constructor, so bad input fails one way.

A size that is not an int (a float, a bool, a string) is a `TypeError`; an int that is out
of range is a `ValueError`. Both messages name the argument, say what was expected and
quote what was found, e.g. ``hidden_dim must be a positive int, got float 8.0``.

Not here: shape checks of arrays (each function knows its own shapes best).

Example:
    >>> positive_int(4, "num_heads")
    4
    >>> positive_int(8.0, "hidden_dim")
    Traceback (most recent call last):
    ...
    TypeError: hidden_dim must be a positive int, got float 8.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_rng", "is_int", "non_negative_int", "positive_int"]


def is_int(value: Any) -> bool:
    """True for a Python or numpy integer, False for bool and everything else."""
    return not isinstance(value, bool | np.bool_) and isinstance(value, int | np.integer)


def positive_int(value: Any, name: str) -> int:
    """Return `value` as an int if it is an integer > 0.

    Args:
        value: the argument to check.
        name: the argument's name, used in the message.

    Returns:
        `value` as a Python int.

    Raises:
        TypeError: if `value` is not an int (bool counts as not an int).
        ValueError: if `value` <= 0.

    Example:
        >>> positive_int(3, "num_layers")
        3
    """
    if not is_int(value):
        raise TypeError(f"{name} must be a positive int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def non_negative_int(value: Any, name: str) -> int:
    """Return `value` as an int if it is an integer >= 0.

    Args:
        value: the argument to check.
        name: the argument's name, used in the message.

    Returns:
        `value` as a Python int.

    Raises:
        TypeError: if `value` is not an int.
        ValueError: if `value` < 0.

    Example:
        >>> non_negative_int(0, "start_pos")
        0
    """
    if not is_int(value):
        raise TypeError(f"{name} must be an int >= 0, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be an int >= 0, got {value!r}")
    return int(value)


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """Return `rng` if it is a `numpy.random.Generator`.

    Args:
        rng: the argument to check.
        name: the argument's name, used in the message.

    Returns:
        `rng` unchanged.

    Raises:
        TypeError: for anything else (a seed, `np.random.RandomState`, the module itself).

    Example:
        >>> check_rng(np.random.default_rng(0)).__class__.__name__
        'Generator'
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng
