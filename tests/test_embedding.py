"""framework.embedding: the sinusoidal table, Embedding.forward/backward and their errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from framework.embedding import Embedding, sinusoidal_table
from framework.tensor import Tensor, tensor_from


def formula(pos: int, dim: int, hidden_dim: int) -> float:
    angle = pos / 10000.0 ** (2 * (dim // 2) / hidden_dim)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def make(vocab: int = 50, hidden: int = 8, max_len: int = 16, seed: int = 0) -> Embedding:
    emb = Embedding(vocab, hidden, max_len)
    emb.init_weights(np.random.default_rng(seed), std=0.5)
    return emb


# -- sinusoidal_table ---------------------------------------------------------------------
def test_table_position_zero_alternates_zero_one() -> None:
    assert sinusoidal_table(4, 64)[0].tolist() == [float(d % 2) for d in range(64)]


@pytest.mark.parametrize("hidden", [1, 7, 8, 64, 129])
def test_table_matches_the_formula(hidden: int) -> None:
    table = sinusoidal_table(300, hidden)
    assert table.shape == (300, hidden) and table.dtype == np.float32
    want = np.array([[formula(p, d, hidden) for d in range(hidden)] for p in range(300)])
    np.testing.assert_allclose(table, want, atol=1e-6)  # one float32 rounding of a value ≤ 1


def test_table_frequencies_are_not_integer_divided() -> None:
    # dim 62 of H = 64 has divisor 10000^(62/64) ≈ 7499, not 1 and not 10000^(63/64)
    assert sinusoidal_table(1001, 64)[1000, 62] == pytest.approx(
        math.sin(1000 / 10000 ** (62 / 64))
    )
    assert sinusoidal_table(1001, 64)[1000, 63] == pytest.approx(
        math.cos(1000 / 10000 ** (62 / 64))
    )


def test_table_odd_hidden_dim_ends_with_a_sine() -> None:
    table = sinusoidal_table(5, 7)
    assert table[3, 6] == pytest.approx(math.sin(3 / 10000 ** (6 / 7)), abs=1e-7)


@pytest.mark.parametrize(
    ("args", "exc"),
    [
        ((0, 8), ValueError),
        ((8, 0), ValueError),
        ((-1, 8), ValueError),
        ((8.0, 8), TypeError),
        ((8, True), TypeError),
    ],
)
def test_table_rejects_bad_sizes(args: tuple[object, object], exc: type[Exception]) -> None:
    with pytest.raises(exc, match=r"max_seq_len|hidden_dim"):
        sinusoidal_table(*args)  # type: ignore[arg-type]


# -- construction ---------------------------------------------------------------------------
def test_new_embedding_has_zero_tokens_and_sinusoidal_positions() -> None:
    emb = Embedding(260, 64, 128)
    assert (emb.vocab_size, emb.hidden_dim, emb.max_seq_len) == (260, 64, 128)
    assert isinstance(emb.token_embedding, Tensor) and emb.token_embedding.shape == (260, 64)
    assert not emb.token_embedding.numpy().any()
    assert emb.position_embedding.shape == (128, 64)
    np.testing.assert_array_equal(emb.position_embedding.numpy(), sinusoidal_table(128, 64))
    assert emb.num_params() == 260 * 64 + 128 * 64 == 24_832


@pytest.mark.parametrize("sizes", [(0, 8, 16), (50, -8, 16), (50, 8, 0)])
def test_embedding_rejects_non_positive_sizes(sizes: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError, match="must be a positive int"):
        Embedding(*sizes)


def test_embedding_rejects_non_int_sizes() -> None:
    with pytest.raises(TypeError, match="hidden_dim"):
        Embedding(50, 8.0, 16)  # type: ignore[arg-type]


def test_init_weights_is_seeded_and_keeps_positions() -> None:
    a, b = make(seed=7), make(seed=7)
    np.testing.assert_array_equal(a.token_embedding.numpy(), b.token_embedding.numpy())
    assert a.token_embedding.numpy().std() == pytest.approx(0.5, rel=0.2)
    np.testing.assert_array_equal(a.position_embedding.numpy(), sinusoidal_table(16, 8))
    with pytest.raises(TypeError, match="rng"):
        a.init_weights(7)  # type: ignore[arg-type]


# -- forward --------------------------------------------------------------------------------
def test_forward_is_token_row_plus_stored_position_row() -> None:
    emb = make()
    emb.position_embedding = tensor_from(np.arange(16 * 8, dtype=np.float32).reshape(16, 8))
    ids = [3, 17, 3, 49]
    out = emb.forward(ids)
    assert isinstance(out, Tensor) and out.shape == (4, 8)
    want = emb.token_embedding.numpy()[ids] + emb.position_embedding.numpy()[:4]
    np.testing.assert_array_equal(out.numpy(), want)


def test_forward_same_token_differs_by_position_and_tokens_differ() -> None:
    emb = make()
    out = emb.forward([5, 5, 9]).numpy()
    pe = sinusoidal_table(3, 8)
    np.testing.assert_allclose(out[1] - out[0], pe[1] - pe[0], atol=1e-6)
    tok = emb.token_embedding.numpy()
    np.testing.assert_allclose(
        emb.forward([9]).numpy()[0] - emb.forward([5]).numpy()[0], tok[9] - tok[5], atol=1e-6
    )


def test_forward_leaves_tables_unchanged_and_start_pos_shifts_positions() -> None:
    emb = make()
    before = emb.token_embedding.numpy().copy()
    out = emb.forward(np.array([1, 2, 1]), start_pos=13)
    np.testing.assert_array_equal(emb.token_embedding.numpy(), before)
    want = before[[1, 2, 1]] + sinusoidal_table(16, 8)[13:16]
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize(
    ("ids", "start", "match"),
    [
        ([1, 50], 0, r"ids\[1\] = 50 is outside \[0, 50\)"),
        ([-1], 0, r"ids\[0\] = -1 is outside"),
        ([0] * 17, 0, "max_seq_len is 16"),
        ([0, 0], 15, "max_seq_len is 16"),
        ([], 0, "must not be empty"),
        ([0], -1, "start_pos"),
    ],
)
def test_forward_rejects_bad_ids(ids: list[int], start: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make().forward(ids, start_pos=start)


@pytest.mark.parametrize("ids", [[1.0, 2.0], [True, False], "ab", [[1, 2]], tensor_from([1, 2])])
def test_forward_rejects_non_int_ids(ids: object) -> None:
    with pytest.raises(TypeError, match="ids"):
        make().forward(ids)  # type: ignore[arg-type]


def test_forward_accepts_exactly_max_seq_len_ids() -> None:
    assert make().forward(list(range(16))).shape == (16, 8)


# -- backward -------------------------------------------------------------------------------
def test_backward_repeated_ids_accumulate() -> None:
    emb = make()
    d_token, d_position = emb.backward([0, 2, 2], np.ones((3, 8), np.float32))
    assert d_token.shape == (50, 8) and d_position.shape == (16, 8)
    np.testing.assert_array_equal(d_token.numpy()[2], np.full(8, 2.0))
    np.testing.assert_array_equal(d_token.numpy()[1], np.zeros(8))
    np.testing.assert_array_equal(d_token.numpy()[0], np.ones(8))
    assert d_token.numpy().sum() == 3 * 8
    np.testing.assert_array_equal(d_position.numpy()[:3], np.ones((3, 8)))
    assert not d_position.numpy()[3:].any()


def test_backward_matches_finite_differences_of_forward() -> None:
    rng = np.random.default_rng(1)
    emb = make(vocab=6, hidden=4, max_len=8)
    ids, start = [0, 2, 2, 5], 3
    g = rng.standard_normal((4, 4))

    def loss() -> float:
        return float(np.sum(emb.forward(ids, start_pos=start).numpy().astype(np.float64) * g))

    d_token, d_position = emb.backward(ids, g.astype(np.float32), start_pos=start)
    for table, grad in ((emb.token_embedding, d_token), (emb.position_embedding, d_position)):
        cells = table.numpy()
        numeric = np.zeros(cells.shape)
        for idx in np.ndindex(cells.shape):
            keep = float(cells[idx])
            cells[idx] = keep + 1e-2
            up = loss()
            cells[idx] = keep - 1e-2
            down = loss()
            cells[idx] = keep
            numeric[idx] = (up - down) / 2e-2
        # the loss is linear in each table: only float32 rounding (~1e-6 / 1e-2) remains
        np.testing.assert_allclose(grad.numpy(), numeric, atol=1e-3)


def test_backward_rejects_bad_grad_shape_and_ids() -> None:
    emb = make()
    with pytest.raises(ValueError, match=r"grad_out must be \[2, 8\]"):
        emb.backward([1, 2], np.ones((2, 7), np.float32))
    with pytest.raises(ValueError, match="outside"):
        emb.backward([1, 99], np.ones((2, 8), np.float32))
