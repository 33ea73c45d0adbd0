"""Choosing the next token from a logits vector: greedy, temperature, top-k, top-p, penalty.

Every function takes 1-D logits [V] (a `Tensor`, numpy array or list), never modifies
them, and returns a plain `int` id. Randomness comes only from the `numpy.random.Generator`
passed in, so the same generator state always gives the same token. The pieces compose in
one fixed order (`sample`): repetition penalty → temperature → top-k → top-p → one draw.

Rules written down (the C framework leaves them implicit or gets them wrong):
- greedy is the *first* index of the maximum;
- temperature T ≤ 0 means greedy, not "T = 1";
- top-k keeps *exactly* k ids, ties going to the lower index; k ≤ 0 or k ≥ V is no filter;
- top-p keeps the smallest set of most probable ids whose mass reaches p (the id that
  crosses p included); p ≥ 1 is no filter, p ≤ 0 keeps only the most probable id;
- the draw is an inverse CDF on one `rng.random()`: an id of probability 0 is never drawn.
Logits may hold -inf (a forbidden id) but not NaN or +inf, and not -inf everywhere.

Not here: the decode loop, stop conditions and the KV cache (`framework.generate`).
The idea and the names follow the C course's `generate.c`; top-p is Holtzman et al. 2019
("nucleus sampling"), the repetition penalty is Keskar et al. 2019 (CTRL), applied the way
Hugging Face `transformers` does (divide a positive logit, multiply a negative one).

Example:
    >>> rng = np.random.default_rng(0)
    >>> sample_greedy([1.0, 3.0, 3.0]), sample_top_k([1.0, 5.0, 2.0], 1, 1.0, rng)
    (1, 1)
    >>> probabilities([0.0, 0.0, 2.0, 1.0], top_k=2).round(3).tolist()
    [0.0, 0.0, 0.731, 0.269]
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.tensor import Tensor

__all__ = [
    "apply_repetition_penalty",
    "check_logits",
    "draw",
    "probabilities",
    "sample",
    "sample_greedy",
    "sample_temperature",
    "sample_top_k",
    "sample_top_p",
    "top_k_mask",
    "top_p_mask",
]

F64 = NDArray[np.float64]


def check_logits(logits: Any, name: str = "logits") -> F64:
    """A float64 copy of 1-D `logits`, after checking they can be sampled from.

    Raises:
        TypeError: if `logits` is not a Tensor, numpy array or list of numbers.
        ValueError: if it is not 1-D, is empty, holds NaN or +inf, or is -inf everywhere.

    Example:
        >>> check_logits([1, 2]).dtype
        dtype('float64')
    """
    if isinstance(logits, Tensor):
        arr = logits.numpy().astype(np.float64)
    elif isinstance(logits, np.ndarray | list | tuple):
        try:
            arr = np.array(logits, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must hold numbers, got {type(logits).__name__}") from None
    else:
        raise TypeError(f"{name} must be a Tensor or a numpy array, not {type(logits).__name__}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D vector [V], got shape {arr.shape}")
    if np.isfinite(arr).all():  # the common case, in one pass
        return arr
    if np.isnan(arr).any():
        raise ValueError(f"{name} holds NaN at index {int(np.flatnonzero(np.isnan(arr))[0])}")
    if np.isposinf(arr).any():
        raise ValueError(f"{name} holds +inf at index {int(np.flatnonzero(arr == np.inf)[0])}")
    if np.isneginf(arr).all():
        raise ValueError(f"{name} is -inf everywhere: no token can be chosen")
    return arr


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, not {type(rng).__name__}")
    return rng


def _real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got NaN")
    return float(value)


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def sample_greedy(logits: Any) -> int:
    """The first index of the largest logit (no randomness).

    Raises:
        TypeError, ValueError: as `check_logits`.

    Example:
        >>> sample_greedy([4.0, 4.0, 1.0])
        0
    """
    return int(np.argmax(check_logits(logits)))


def _softmax(x: F64, temperature: float) -> F64:
    """softmax(x / T) for T > 0, computed as exp((x - max) / T): no overflow for tiny T."""
    z = np.exp((x - x.max()) / temperature)  # (V,) in [0, 1], exactly 1 at the max
    return z / z.sum()  # type: ignore[no-any-return]


def top_k_mask(logits: Any, k: int) -> NDArray[np.bool_]:
    """Which ids top-k keeps: exactly the k largest logits, ties to the lower index.

    Args:
        logits: 1-D logits [V].
        k: how many to keep; k ≤ 0 or k ≥ V keeps every id.

    Returns:
        A bool array [V] with exactly min(k, V) True entries (all True when not filtering).

    Raises:
        TypeError: if `k` is not an int. ValueError: bad logits, as `check_logits`.

    Example:
        >>> top_k_mask([3.0, 3.0, 3.0, 0.0], 2).tolist()
        [True, True, False, False]
    """
    x = check_logits(logits)
    k = _int(k, "k")
    keep = np.ones(x.size, dtype=bool)  # (V,)
    if 0 < k < x.size:
        order = np.argsort(-x, kind="stable")  # (V,) descending; equal values by index
        keep[order[k:]] = False
    return keep


def top_p_mask(probs: Any, p: float) -> NDArray[np.bool_]:
    """Which ids nucleus sampling keeps, given a probability vector.

    The smallest set of the most probable ids (ties to the lower index) whose mass reaches
    `p`, the id that crosses `p` included. p ≥ 1 keeps every id, p ≤ 0 only the first.

    Example:
        >>> top_p_mask(np.array([0.1, 0.6, 0.3]), 0.7).tolist()
        [False, True, True]
    """
    pr = np.asarray(probs, dtype=np.float64)
    p = _real(p, "p")
    keep = np.ones(pr.size, dtype=bool)  # (V,)
    if p < 1.0:
        order = np.argsort(-pr, kind="stable")  # (V,) most probable first
        before = np.concatenate(([0.0], np.cumsum(pr[order])[:-1]))  # (V,) mass ahead of each
        drop = before >= p
        drop[0] = False  # the most probable id always stays
        keep[order[drop]] = False
    return keep


def apply_repetition_penalty(logits: Any, previous: Iterable[int], penalty: float) -> F64:
    """A penalised copy: for each id in `previous`, a logit > 0 is divided by `penalty`,
    a logit ≤ 0 multiplied by it (penalty > 1 discourages repeats, 1 changes nothing).

    Raises:
        ValueError: if `penalty` ≤ 0 or an id is outside [0, V).

    Example:
        >>> apply_repetition_penalty([2.0, -1.0, 3.0], [0, 1, 0], 2.0).tolist()
        [1.0, -2.0, 3.0]
    """
    x = check_logits(logits)
    penalty = _real(penalty, "repetition_penalty")
    if penalty <= 0:
        raise ValueError(f"repetition_penalty must be > 0, got {penalty}")
    ids = np.unique(np.asarray(list(previous), dtype=np.int64))  # (n,) each id once
    if ids.size and (ids.min() < 0 or ids.max() >= x.size):
        raise ValueError(f"previous ids must be in [0, {x.size}), got {ids.min()}..{ids.max()}")
    seen = x[ids]
    x[ids] = np.where(seen > 0, seen / penalty, seen * penalty)
    return x


def probabilities(logits: Any, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> F64:
    """The distribution `sample` draws from: softmax(logits / T), then top-k, then top-p,
    renormalised. T ≤ 0 gives a one-hot vector on the greedy id.

    Example:
        >>> probabilities([0.0, 1.0], temperature=0.0).tolist()
        [0.0, 1.0]
    """
    x = check_logits(logits)
    temperature = _real(temperature, "temperature")
    if temperature <= 0:
        probs = np.zeros_like(x)  # (V,)
        probs[int(np.argmax(x))] = 1.0
        return probs
    probs = _softmax(x, temperature) * top_k_mask(x, top_k)  # (V,)
    probs /= probs.sum()
    probs *= top_p_mask(probs, top_p)
    return probs / probs.sum()  # type: ignore[no-any-return]


def draw(probs: F64, rng: np.random.Generator) -> int:
    """One id from a probability vector by inverse CDF on a single `rng.random()`.

    The cumulative sum is scaled by its total, so `probs` need not sum exactly to 1, and an
    id of probability 0 is never returned.

    Example:
        >>> draw(np.array([0.0, 1.0, 0.0]), np.random.default_rng(1))
        1
    """
    rng = _check_rng(rng)
    cdf = np.cumsum(probs)  # (V,) non-decreasing
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(i, int(np.flatnonzero(probs > 0)[-1]))  # u·total may round up to total


def sample_temperature(logits: Any, temperature: float, rng: np.random.Generator) -> int:
    """Draw from softmax(logits / T); T ≤ 0 is greedy (and draws nothing from `rng`).

    Example:
        >>> sample_temperature([0.0, 9.0], 0.0, np.random.default_rng(0))
        1
    """
    return sample(logits, rng, temperature=temperature)


def sample_top_k(logits: Any, k: int, temperature: float, rng: np.random.Generator) -> int:
    """Keep exactly the k largest logits (ties: lower index), then `sample_temperature`.

    Example:
        >>> sample_top_k([1.0, 5.0, 2.0, 4.0], 2, 0.1, np.random.default_rng(0)) in (1, 3)
        True
    """
    return sample(logits, rng, temperature=temperature, top_k=_int(k, "k"))


def sample_top_p(logits: Any, p: float, temperature: float, rng: np.random.Generator) -> int:
    """Nucleus sampling: keep the most probable ids up to mass p, then draw.

    Example:
        >>> sample_top_p([0.0, 0.0, 9.0], 0.5, 1.0, np.random.default_rng(0))
        2
    """
    return sample(logits, rng, temperature=temperature, top_p=p)


def sample(
    logits: Any,
    rng: np.random.Generator,
    *,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    repetition_penalty: float = 1.0,
    previous: Iterable[int] = (),
) -> int:
    """One token id: repetition penalty, then temperature, top-k, top-p, and one draw.

    Args:
        logits: 1-D logits [V]; not modified.
        rng: the only source of randomness (nothing is drawn when T ≤ 0).
        temperature: T > 0 divides the logits; T ≤ 0 means greedy.
        top_k: keep exactly this many ids (0 = off).
        top_p: nucleus mass (1.0 = off).
        repetition_penalty: > 0; 1.0 = off. Applied to the ids in `previous`.
        previous: ids generated (or seen) so far.

    Returns:
        The chosen id, an int in [0, V).

    Raises:
        TypeError: for logits, rng or a parameter of the wrong type.
        ValueError: for bad logits or a penalty ≤ 0.

    Example:
        >>> sample([1.0, 2.0, 1.5], np.random.default_rng(0), temperature=0)
        1
    """
    x = check_logits(logits)
    rng = _check_rng(rng)
    temperature, top_k = _real(temperature, "temperature"), _int(top_k, "top_k")
    top_p = _real(top_p, "top_p")
    if _real(repetition_penalty, "repetition_penalty") != 1.0:
        x = apply_repetition_penalty(x, previous, repetition_penalty)
    if temperature <= 0:
        return int(np.argmax(x))
    order = np.argsort(-x, kind="stable")  # (V,) most likely first, ties by index
    if 0 < top_k < x.size:
        order = order[:top_k]  # (k,)
    z = np.exp((x[order] - x[order[0]]) / temperature)  # (k,) unnormalised, descending
    # Distinct logits can round to one probability: order as `probabilities` does, by
    # probability with ties to the lower id, so the nucleus below is the same set of ids.
    resort = np.lexsort((order, -z))  # (k,)
    order, z = order[resort], z[resort]
    cdf = np.cumsum(z)  # (k,)
    if top_p < 1.0:  # the nucleus is a prefix of the sorted ids
        before = np.concatenate(([0.0], cdf[:-1]))  # (k,) mass ahead of each id
        cdf = cdf[: max(1, int(np.count_nonzero(before < top_p * cdf[-1])))]
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return int(order[min(i, int(np.count_nonzero(z[: cdf.size] > 0)) - 1)])
