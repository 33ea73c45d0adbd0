"""framework.math_ops and framework.attention: values, shapes, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from framework import (
    MultiHeadAttention,
    create_causal_mask,
    gelu,
    matmul,
    matmul_transposed_b,
    softmax,
    softmax_inplace,
    tensor_from,
)

finite = st.floats(-1e4, 1e4, allow_nan=False, width=32)


@given(arrays(np.float32, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=finite))
def test_softmax_rows_are_distributions(x: np.ndarray) -> None:
    out = softmax(x).numpy()
    assert np.all(np.isfinite(out)) and np.all(out >= 0)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)


def test_softmax_fully_masked_row_is_uniform() -> None:
    out = softmax(np.full((1, 4), -1e9, np.float32)).numpy()
    np.testing.assert_allclose(out, 0.25)


def test_softmax_inplace_changes_its_argument() -> None:
    t = tensor_from([[0.0, 0.0]])
    softmax_inplace(t)
    assert t.tolist() == [[0.5, 0.5]]


def test_matmul_shapes_and_errors() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(matmul(a, a.T).numpy(), a @ a.T)
    np.testing.assert_array_equal(matmul_transposed_b(a, a).numpy(), a @ a.T)
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        matmul(a, a)
    with pytest.raises(ValueError, match="2-D"):
        matmul(a[0], a)


def test_gelu_matches_the_tanh_formula() -> None:
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    want = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(gelu(x).numpy(), want, rtol=1e-6, atol=1e-7)  # float32 vs float64


def test_causal_mask_values() -> None:
    m = create_causal_mask(3).numpy()
    assert m[1, 0] == 0 and m[1, 1] == 0 and m[1, 2] == -1e9
    with pytest.raises(ValueError, match="seq_len"):
        create_causal_mask(0)


def test_attention_is_causal() -> None:
    rng = np.random.default_rng(0)
    mha = MultiHeadAttention(8, 2)
    mha.init_weights(rng, std=0.5)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    out = mha.forward(x, create_causal_mask(5)).numpy()
    x2 = x.copy()
    x2[3:] += 10.0  # changing the future must not change the past
    out2 = mha.forward(x2, create_causal_mask(5)).numpy()
    np.testing.assert_allclose(out[:3], out2[:3], rtol=1e-5, atol=1e-6)
    assert not np.allclose(out[3:], out2[3:])


def test_attention_rejects_bad_config_and_shapes() -> None:
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"\[S, 8\]"):
        mha.forward(np.zeros((3, 6), np.float32))
    with pytest.raises(ValueError, match="mask"):
        mha.forward(np.zeros((3, 8), np.float32), create_causal_mask(4))
