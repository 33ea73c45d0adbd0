"""framework.dataloader: shifted windows, seeded and resumable; fixed evaluation windows."""

from __future__ import annotations

import numpy as np
import pytest

from framework.dataloader import WindowLoader, eval_windows


def test_targets_are_inputs_shifted_by_one() -> None:
    tokens = np.arange(100) * 3
    x, y = WindowLoader(tokens, batch_size=4, seq_len=7, seed=1).next_batch()
    assert x.shape == y.shape == (4, 7) and x.dtype == np.int64
    np.testing.assert_array_equal(y, x + 3)  # consecutive tokens of the stream
    assert (x % 3 == 0).all() and x.min() >= 0 and y.max() <= 297


def test_same_seed_same_batches_and_state_resumes() -> None:
    tokens = np.random.default_rng(0).integers(0, 50, size=500)
    a, b = WindowLoader(tokens, 3, 8, seed=9), WindowLoader(tokens, 3, 8, seed=9)
    for _ in range(3):
        np.testing.assert_array_equal(a.next_batch()[0], b.next_batch()[0])
    saved = a.state()
    after = [a.next_batch()[0] for _ in range(2)]
    c = WindowLoader(tokens, 3, 8, seed=123)
    c.set_state(saved)
    for want in after:
        np.testing.assert_array_equal(c.next_batch()[0], want)
    assert not np.array_equal(WindowLoader(tokens, 3, 8, seed=10).next_batch()[0], after[0])


def test_every_start_is_reachable_including_the_last() -> None:
    loader = WindowLoader(np.arange(6), batch_size=200, seq_len=3, seed=0)
    x, y = loader.next_batch()
    assert set(x[:, 0].tolist()) == {0, 1, 2}  # starts 0..N-T-1
    assert y.max() == 5


def test_too_short_or_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="seq_len \\+ 1"):
        WindowLoader(np.arange(4), 1, 4)
    with pytest.raises(TypeError, match="integer"):
        WindowLoader(np.zeros(10), 1, 4)
    with pytest.raises(ValueError, match="batch_size"):
        WindowLoader(np.arange(10), 0, 4)
    with pytest.raises(ValueError, match="seq_len"):
        WindowLoader(np.arange(10), 1, 0)


def test_eval_windows_are_fixed_and_disjoint() -> None:
    batches = list(eval_windows(np.arange(23), batch_size=2, seq_len=5))
    xs = np.concatenate([x for x, _ in batches])
    np.testing.assert_array_equal(xs[:, 0], [0, 5, 10, 15])
    assert [len(x) for x, _ in batches] == [2, 2]
    assert len(list(eval_windows(np.arange(23), 1, 5, max_batches=3))) == 3


def test_windows_can_start_only_at_given_positions() -> None:
    tokens = np.arange(50)
    loader = WindowLoader(tokens, batch_size=300, seq_len=10, seed=2, starts=[0, 7, 7, 30, 45])
    x, y = loader.next_batch()
    assert set(x[:, 0].tolist()) == {0, 7, 30}  # 45 leaves no room for 10 + 1 tokens
    np.testing.assert_array_equal(y, x + 1)
    with pytest.raises(ValueError, match="no start"):
        WindowLoader(tokens, 1, 10, starts=[45, 49])
