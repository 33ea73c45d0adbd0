"""framework.sampling: the rules of each sampler, proportions, and what must never change."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework import Tensor, tensor_from
from framework.sampling import (
    apply_repetition_penalty,
    draw,
    probabilities,
    sample,
    sample_greedy,
    sample_temperature,
    sample_top_k,
    sample_top_p,
    top_k_mask,
    top_p_mask,
)


def softmax(x: list[float], t: float = 1.0) -> np.ndarray:
    z = np.exp((np.asarray(x, dtype=np.float64) - max(x)) / t)
    return z / z.sum()


def frequencies(fn, n: int, seed: int, v: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    counts = np.bincount([fn(rng) for _ in range(n)], minlength=v)
    return counts / n


def assert_proportions(freq: np.ndarray, probs: np.ndarray, n: int) -> None:
    # 5 binomial standard deviations per id: a correct sampler fails this with p < 1e-6
    sd = np.sqrt(probs * (1 - probs) / n)
    assert np.all(np.abs(freq - probs) <= 5 * sd + 1e-12), (freq, probs)


def test_greedy_first_maximum() -> None:
    assert sample_greedy([1, 2, 5, 7, 3]) == 3
    assert sample_greedy([4.0, 4.0, 4.0]) == 0
    assert sample_greedy(np.array([-np.inf, 2.0, 2.0])) == 1
    assert isinstance(sample_greedy(np.array([1.0, 2.0], dtype=np.float32)), int)


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        ([], ValueError),
        ([1.0, float("nan")], ValueError),
        ([1.0, float("inf")], ValueError),
        ([-np.inf, -np.inf], ValueError),
        ([[1.0, 2.0]], ValueError),
        ("abc", TypeError),
        (3.0, TypeError),
    ],
)
def test_bad_logits_raise(bad: object, exc: type[Exception]) -> None:
    rng = np.random.default_rng(0)
    for fn in (
        lambda: sample_greedy(bad),
        lambda: sample_temperature(bad, 1.0, rng),
        lambda: sample_top_k(bad, 2, 1.0, rng),
        lambda: sample_top_p(bad, 0.5, 1.0, rng),
    ):
        with pytest.raises(exc, match="logits"):
            fn()


def test_bad_parameters_raise() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="rng"):
        sample_temperature([1.0, 2.0], 1.0, 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="k"):
        sample_top_k([1.0, 2.0], 1.5, 1.0, rng)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="temperature"):
        sample_temperature([1.0, 2.0], "hot", rng)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="temperature"):
        sample_temperature([1.0, 2.0], float("nan"), rng)
    with pytest.raises(ValueError, match="repetition_penalty"):
        sample([1.0, 2.0], rng, repetition_penalty=0.0, previous=[0])


def test_temperature_zero_or_negative_is_greedy_and_draws_nothing() -> None:
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    assert sample_temperature([1.0, 5.0, 2.0, 3.0], 0.0, rng) == 1
    assert sample_temperature([1.0, 5.0, 2.0, 3.0], -1.0, rng) == 1
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("t", [1.0, 2.0, 0.5])
def test_temperature_matches_softmax(t: float) -> None:
    logits = [1.0, 2.0, 3.0, 4.0, 5.0]
    n = 20000
    freq = frequencies(lambda r: sample_temperature(logits, t, r), n, 11, 5)
    assert_proportions(freq, softmax(logits, t), n)


def test_tiny_temperature_is_greedy_without_overflow() -> None:
    rng = np.random.default_rng(0)
    assert {sample_temperature([0.0, 0.0, 0.0, 5.0, 0.0], 1e-30, rng) for _ in range(200)} == {3}


def test_top_k_keeps_exactly_k_ties_to_lower_index() -> None:
    assert top_k_mask([3.0, 3.0, 3.0, 0.0], 2).tolist() == [True, True, False, False]
    assert top_k_mask([0.0, 3.0, 1.0, 3.0], 1).tolist() == [False, True, False, False]
    for k in (0, -1, 4, 10):
        assert top_k_mask([1.0, 5.0, 2.0, 3.0], k).all()
    n = 20000
    freq = frequencies(lambda r: sample_top_k([3.0, 3.0, 3.0, 0.0], 2, 1.0, r), n, 3, 4)
    assert_proportions(freq, np.array([0.5, 0.5, 0.0, 0.0]), n)


def test_top_k_proportions_among_the_k_largest() -> None:
    logits = [1.0, 5.0, 2.0, 4.0, 0.0]
    n = 20000
    freq = frequencies(lambda r: sample_top_k(logits, 2, 1.0, r), n, 2024, 5)
    want = np.zeros(5)
    want[[1, 3]] = softmax([5.0, 4.0])
    assert_proportions(freq, want, n)


def test_top_p_keeps_the_crossing_token() -> None:
    probs = np.array([0.1, 0.6, 0.3])
    assert top_p_mask(probs, 0.6).tolist() == [False, True, False]
    assert top_p_mask(probs, 0.61).tolist() == [False, True, True]
    assert top_p_mask(probs, 0.0).tolist() == [False, True, False]
    assert top_p_mask(probs, 1.0).tolist() == [True, True, True]
    n = 20000
    logits = np.log([0.1, 0.6, 0.3])
    freq = frequencies(lambda r: sample_top_p(logits, 0.8, 1.0, r), n, 8, 3)
    assert_proportions(freq, np.array([0.0, 2 / 3, 1 / 3]), n)


def test_repetition_penalty() -> None:
    out = apply_repetition_penalty([2.0, -1.0, 3.0, 0.5], [0, 1, 0], 2.0)
    assert out.tolist() == [1.0, -2.0, 3.0, 0.5]
    rng = np.random.default_rng(0)
    # 3.0 for id 2 becomes 1.0 after a penalty of 3: id 1 (2.0) wins greedily
    assert sample([0.0, 2.0, 3.0], rng, temperature=0, repetition_penalty=3.0, previous=[2]) == 1
    with pytest.raises(ValueError, match="previous"):
        apply_repetition_penalty([1.0, 2.0], [5], 1.5)


def test_logits_never_modified() -> None:
    base = np.array([1.0, 5.0, 2.0, 4.0, 0.0], dtype=np.float32)
    rng = np.random.default_rng(0)
    for logits in (base.copy(), tensor_from(base), strided_view(base.tolist())):
        before = np.array(logits, dtype=np.float32).copy()
        sample_greedy(logits)
        sample_temperature(logits, 0.7, rng)
        sample_top_k(logits, 2, 0.7, rng)
        sample_top_p(logits, 0.5, 0.7, rng)
        sample(
            logits, rng, temperature=0.7, top_k=3, top_p=0.9, repetition_penalty=1.3, previous=[1]
        )
        assert np.array_equal(np.array(logits, dtype=np.float32), before)


def strided_view(values: list[float]) -> Tensor:
    """A 1-D Tensor over every other element of a buffer, starting at offset 1."""
    data = np.zeros(2 * len(values) + 1, dtype=np.float32)
    data[1::2] = values
    return Tensor(data, (len(values),), (2,), 1)


def test_strided_view_logits() -> None:
    view = strided_view([0.0, 7.0, 1.0, 7.0])
    rng = np.random.default_rng(0)
    assert sample_greedy(view) == 1
    assert {sample_top_k(view, 2, 1.0, rng) for _ in range(100)} == {1, 3}
    assert view.data.tolist() == [0.0, 0.0, 0.0, 7.0, 0.0, 1.0, 0.0, 7.0, 0.0]


def test_reproducible_from_the_seed() -> None:
    logits = np.linspace(-1, 1, 50)
    a = [sample(logits, np.random.default_rng(7), top_k=20, top_p=0.9) for _ in range(3)]
    rng1, rng2 = np.random.default_rng(7), np.random.default_rng(7)
    seq1 = [sample(logits, rng1, temperature=1.3, top_k=20) for _ in range(100)]
    seq2 = [sample(logits, rng2, temperature=1.3, top_k=20) for _ in range(100)]
    assert seq1 == seq2
    assert len(set(a)) == 1
    assert len(set(seq1)) > 5  # really random, not greedy


@given(
    st.lists(st.floats(-50, 50), min_size=1, max_size=40),
    st.floats(0.05, 5.0),
    st.integers(-1, 45),
    st.floats(0.0, 1.0),
    st.integers(0, 2**32 - 1),
)
def test_draw_stays_in_the_support(
    logits: list[float], t: float, k: int, p: float, seed: int
) -> None:
    probs = probabilities(logits, t, k, p)
    assert probs.sum() == pytest.approx(1.0)
    kept = int((probs > 0).sum())
    if 0 < k < len(logits):
        assert kept <= k
    tok = sample(logits, np.random.default_rng(seed), temperature=t, top_k=k, top_p=p)
    assert 0 <= tok < len(logits) and probs[tok] > 0


def test_draw_never_picks_a_zero_probability_id() -> None:
    rng = np.random.default_rng(0)
    probs = np.array([0.0, 0.5, 0.0, 0.5, 0.0])
    assert set(draw(probs, rng) for _ in range(2000)) == {1, 3}


@pytest.mark.parametrize(("t", "k", "p"), [(1.0, 3, 0.8), (0.7, 0, 0.5), (1.5, 4, 1.0)])
def test_sample_draws_from_probabilities(t: float, k: int, p: float) -> None:
    logits = [0.5, 2.0, 1.0, 2.0, -1.0, 0.0]
    n = 20000
    freq = frequencies(lambda r: sample(logits, r, temperature=t, top_k=k, top_p=p), n, 21, 6)
    assert_proportions(freq, probabilities(logits, t, k, p), n)


def test_logits_that_round_to_one_probability_keep_the_lower_id() -> None:
    # exp(-7e-93) == 1.0 exactly: both ids have probability 0.5, so top-p 0 keeps id 0
    logits = [-6.98e-93, 0.0]
    probs = probabilities(logits, 1.0, 0, 0.0)
    assert probs.tolist() == [1.0, 0.0]
    for seed in range(20):
        assert sample(logits, np.random.default_rng(seed), temperature=1.0, top_p=0.0) == 0
