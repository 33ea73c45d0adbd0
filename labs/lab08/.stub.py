"""Lab08 — text generation: choose the next token from the model's logits, three ways.

    logits [V] ──► sample_greedy        the largest logit, no randomness
               ──► sample_temperature   draw from softmax(logits / T)
               ──► sample_top_k         keep the k largest, then sample_temperature

A language model only scores every possible next token; a sampler turns those scores into
one choice, and the generation loop (framework/generate.py) repeats that until EOS or a
length limit. Run `make test` in this folder after every change; `TASK.md` explains each
function.

Rules for all three: `logits` is a 1-D Tensor or numpy array of length V ≥ 1 and must not
be modified; NaN or an empty vector → ValueError; the result is a plain `int` in [0, V).
Randomness comes only from the `rng` argument (a `numpy.random.Generator`: use
`rng.random()`, `rng.choice(...)` or `rng.gumbel(...)`), never from `np.random.*`, `random`
or the clock: the same generator state must give the same token. You may use numpy,
`as_tensor` and `framework.softmax`, but not the framework's own samplers
(`framework.sampling`): the point is to write them.
"""

from __future__ import annotations

import numpy as np

from framework import Tensor, as_tensor  # noqa: F401


def sample_greedy(logits: Tensor) -> int:
    """The index of the largest logit; on a tie, the first (lowest) such index.

    Args:
        logits: shape [V] (a Tensor or numpy array); not modified.

    Returns:
        An int in [0, V).

    Raises:
        ValueError: if logits is empty, not 1-D, or holds NaN.
    """
    # TODO(lab08): check the input, then return the first index of the maximum.
    raise NotImplementedError("lab08: implement sample_greedy")


def sample_temperature(logits: Tensor, temperature: float, rng: np.random.Generator) -> int:
    """Draw one index from softmax(logits / temperature).

    temperature ≤ 0 means greedy (`sample_greedy`). T = 1 samples the model's own
    distribution; T < 1 sharpens it towards the maximum, T > 1 flattens it.

    Args:
        logits: shape [V]; not modified.
        temperature: a float; ≤ 0 → greedy.
        rng: the only source of randomness.

    Returns:
        An int in [0, V); index i comes out with probability softmax(logits / T)[i].

    Raises:
        ValueError: if logits is empty, not 1-D, or holds NaN.
    """
    # TODO(lab08): T ≤ 0 → greedy; else a stable softmax of logits / T, then one draw.
    raise NotImplementedError("lab08: implement sample_temperature")


def sample_top_k(logits: Tensor, k: int, temperature: float, rng: np.random.Generator) -> int:
    """Keep only the k largest logits, then sample with `sample_temperature`.

    Exactly k indices survive: when several logits tie at the cut, the lower indices are
    kept. k ≤ 0 or k ≥ V means no filtering.

    Args:
        logits: shape [V]; not modified.
        k: how many indices may be drawn.
        temperature: as in `sample_temperature` (≤ 0 → greedy).
        rng: the only source of randomness.

    Returns:
        An int in [0, V), always one of the k kept indices.

    Raises:
        ValueError: if logits is empty, not 1-D, or holds NaN.
    """
    # TODO(lab08): copy the logits, set all but the k largest to -inf, sample the copy.
    raise NotImplementedError("lab08: implement sample_top_k")
