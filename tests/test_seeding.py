"""`grader.sandbox.seeding` builds exactly the generators of ``default_rng([*prefix, i])``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.sandbox.seeding import generators, seed_states

prefixes = st.lists(st.integers(0, 2**128 - 1), min_size=0, max_size=7)


@settings(max_examples=60, deadline=None)
@given(prefix=prefixes, n=st.integers(0, 70))
def test_the_states_are_those_of_seed_sequence(prefix: list[int], n: int) -> None:
    got = seed_states(prefix, n)
    assert got.shape == (n, 4) and got.dtype == np.uint64
    for i in range(n):
        want = np.random.SeedSequence([*prefix, i]).generate_state(4, np.uint64)
        assert np.array_equal(got[i], want), (prefix, i)


@pytest.mark.parametrize("prefix", [(801,), (5, 812), (2**64 + 3, 0, 2**32), ()])
def test_each_generator_draws_what_default_rng_draws(prefix: tuple[int, ...]) -> None:
    made = list(generators(prefix, 300))
    assert len({id(g) for g in made}) == 300  # a fresh object each
    for i in (0, 1, 2, 255, 256, 299):
        want = np.random.default_rng([*prefix, i])
        assert made[i].bit_generator.state == want.bit_generator.state
        assert np.array_equal(made[i].random(5), want.random(5))
        assert made[i].integers(0, 10**9) == want.integers(0, 10**9)


def test_a_generator_refuses_to_be_reseeded_another_way() -> None:
    from grader.sandbox.seeding import _Given

    given_seed = _Given(seed_states((1,), 1)[0])
    with pytest.raises(ValueError, match="4 uint64 words"):
        given_seed.generate_state(8, np.uint32)
