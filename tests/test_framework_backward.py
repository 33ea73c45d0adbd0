"""framework.gpt and GPTModel.forward_batch/backward: every parameter tensor of a tiny
model against float64 central differences, and the training pass's own contract."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from framework import GPTModel, ModelConfig, init_weights, tiny_config
from framework.backward import Workspace, _max_keys, _scores_bounded
from framework.gpt import GPTWeights, gpt_backward, gpt_forward

TINY = ModelConfig(11, 8, 2, 2, 16, 8)  # V, H, heads, layers, F, max_seq_len


def random_state64(config: ModelConfig, seed: int) -> dict[str, np.ndarray]:
    """float64 parameters, all random (γ near 1), so every gradient path carries signal."""
    model = GPTModel(config)
    rng = np.random.default_rng(seed)
    return {
        name: rng.normal(0.0, 0.4, size=t.shape) + (1.0 if name.endswith("gamma") else 0.0)
        for name, t in model.parameters()
    }


def test_every_parameter_matches_float64_central_differences() -> None:
    state = random_state64(TINY, seed=0)
    rng = np.random.default_rng(1)
    ids = np.array([[3, 3, 7, 1, 3, 0], [10, 2, 2, 5, 9, 3]])  # repeats within and across rows
    dlogits = rng.standard_normal((2, 6, 11))

    def loss() -> float:
        logits, _ = gpt_forward(GPTWeights.from_state(state, TINY), ids)
        return float(np.sum(logits * dlogits))

    w = GPTWeights.from_state(state, TINY)
    logits, act = gpt_forward(w, ids)
    assert logits.dtype == np.float64
    grads = gpt_backward(dlogits, act, w)
    assert list(grads) == list(state)
    step = 1e-5
    for name, arr in state.items():
        numeric = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            keep = arr[idx]
            arr[idx] = keep + step
            up = loss()
            arr[idx] = keep - step
            down = loss()
            arr[idx] = keep
            numeric[idx] = (up - down) / (2 * step)
        norm = max(np.linalg.norm(numeric), np.linalg.norm(grads[name]))
        assert norm > 0, name
        err = np.linalg.norm(grads[name] - numeric) / norm
        assert err <= 1e-6, f"{name}: relative error {err:.2e}"
    assert not grads["embedding.position_embedding"][6:].any()  # positions beyond T unused
    assert not grads["embedding.token_embedding"][[4, 6, 8]].any()  # ids never seen


def test_float32_model_backward_agrees_with_the_float64_pass() -> None:
    model = GPTModel(TINY)
    state = random_state64(TINY, seed=2)
    model.load_state(state)
    ids = np.array([[1, 2, 3, 4, 5, 6, 7, 8]])
    dlogits = np.random.default_rng(3).standard_normal((1, 8, 11))
    logits32 = model.forward_batch(ids)
    assert logits32.dtype == np.float32
    grads32 = model.backward(dlogits.astype(np.float32))
    assert all(g.dtype == np.float32 for g in grads32.values())
    state64 = {k: v.astype(np.float64) for k, v in model.state_dict().items()}  # the same weights
    w = GPTWeights.from_state(state64, TINY)
    logits64, act = gpt_forward(w, ids)
    np.testing.assert_allclose(logits32, logits64, rtol=1e-5, atol=1e-5)
    for name, g in gpt_backward(dlogits, act, w).items():
        err = np.linalg.norm(grads32[name] - g) / max(np.linalg.norm(g), 1e-30)
        assert err < 1e-4, name


def test_forward_batch_rows_equal_the_single_sequence_forward() -> None:
    model = GPTModel(tiny_config())
    init_weights(model, 4)
    ids = np.random.default_rng(5).integers(0, 260, size=(3, 10))
    logits = model.forward_batch(ids)
    assert logits.shape == (3, 10, 260)
    for row in range(3):
        want = model.forward(ids[row]).numpy()
        np.testing.assert_allclose(logits[row], want, rtol=1e-5, atol=1e-6)


def test_batch_gradients_are_the_sum_of_per_sequence_gradients() -> None:
    model = GPTModel(TINY)
    model.load_state(random_state64(TINY, seed=6))
    ids = np.array([[1, 2, 3], [4, 5, 1]])
    d = np.random.default_rng(7).standard_normal((2, 3, 11)).astype(np.float32)
    model.forward_batch(ids)
    both = model.backward(d)
    model.forward_batch(ids[:1])
    first = model.backward(d[:1])
    model.forward_batch(ids[1:])
    second = model.backward(d[1:])
    for name in both:  # what dlogits says, no hidden averaging or re-summing
        np.testing.assert_allclose(both[name], first[name] + second[name], rtol=1e-4, atol=1e-6)


def test_backward_contract_errors() -> None:
    model = GPTModel(TINY)
    with pytest.raises(RuntimeError, match="forward_batch"):
        model.backward(np.zeros((1, 2, 11)))
    model.forward_batch(np.array([[1, 2]]))
    with pytest.raises(ValueError, match=r"\(1, 2, 11\)"):
        model.backward(np.zeros((1, 3, 11)))


@pytest.mark.parametrize(
    ("ids", "exc", "match"),
    [
        (np.array([1, 2]), TypeError, r"2-D array of ints \[B, T\]"),
        (np.array([[1.0, 2.0]]), TypeError, "ints"),
        (np.zeros((1, 0), np.int64), ValueError, "empty"),
        (np.zeros((1, 9), np.int64), ValueError, "T = 9 exceeds max_seq_len 8"),
        (np.array([[1, 2], [3, 11]]), ValueError, r"ids\[1, 1\] = 11 is outside \[0, 11\)"),
        (np.array([[-1, 2]]), ValueError, r"ids\[0, 0\] = -1"),
    ],
)
def test_forward_batch_rejects_bad_ids(ids: np.ndarray, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        GPTModel(TINY).forward_batch(ids)


def test_inference_batch_keeps_nothing_and_gives_the_same_logits() -> None:
    model = GPTModel(TINY)
    model.load_state(random_state64(TINY, seed=8))
    ids = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    kept = model.forward_batch(ids)
    model.backward(np.ones_like(kept))  # fine after a training forward
    light = model.forward_batch(ids, keep_activations=False)
    np.testing.assert_array_equal(light, kept)
    with pytest.raises(RuntimeError, match="forward_batch"):
        model.backward(np.ones_like(kept))  # nothing was kept for it


@given(
    keys=st.integers(1, 70),
    queries=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=60, deadline=None)
def test_the_folded_max_over_keys_is_numpys_max(keys: int, queries: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.standard_normal((2, 3, keys, queries)).astype(np.float32)
    p[0, 1, rng.integers(keys)] = -1e9  # a masked row
    before = p.copy()
    fold = np.full((2, 3, (keys + 1) // 2, queries), np.nan, np.float32)
    got = _max_keys(p, fold)
    assert np.array_equal(got, p.max(axis=-2, keepdims=True))
    assert np.array_equal(p, before)  # the scores are only read


def _scaled_qk(state: dict[str, np.ndarray], factor: float) -> dict[str, np.ndarray]:
    """The state with W_q and W_k of every block times `factor` (the scores times factor²)."""
    return {n: a * factor if n.endswith(("attn.w_q", "attn.w_k")) else a for n, a in state.items()}


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0])
def test_softmax_without_the_max_shift_only_where_no_score_can_overflow(factor: float) -> None:
    # float32 logits and gradients against the float64 pass, with scores small (no shift:
    # the bound holds), large (e^40 and more: still no shift) and beyond what float32's
    # exp can hold (the shift is back; without it the logits are NaN)
    ids = np.array([[1, 2, 3, 4, 5, 6, 7, 8], [8, 1, 8, 2, 8, 3, 8, 4]])
    state = _scaled_qk(random_state64(TINY, seed=7), factor)
    model = GPTModel(TINY)
    model.load_state(state)
    w32 = model.gpt_weights()
    logits32, act32 = gpt_forward(w32, ids)
    ws = act32.workspace
    qk = ws.qkv[:, :, : 2 * TINY.hidden_dim]  # q' | k of every layer, as the pass left them
    bounded = [_scores_bounded(ws, layer.copy()) for layer in qk]
    heads = [(a.reshape(2, 8, TINY.num_heads, -1) for a in (x[:, :8], x[:, 8:])) for x in qk]
    scores = [np.einsum("bihd,bjhd->bhij", *pair) for pair in heads]
    largest = max(float(np.abs(s).max()) for s in scores)
    if factor == 1.0:
        assert all(bounded) and largest < 20
    elif factor == 2.0:
        assert all(bounded) and largest > 40
    else:
        assert not any(bounded) and largest > 150  # e^150 overflows float32
    dlogits = np.random.default_rng(8).standard_normal((2, 8, 11))
    grads32 = gpt_backward(dlogits.astype(np.float32), act32, w32)
    w64 = GPTWeights.from_state({k: v.astype(np.float64) for k, v in state.items()}, TINY)
    logits64, act = gpt_forward(w64, ids)
    assert np.isfinite(logits32).all()
    np.testing.assert_allclose(logits32, logits64, rtol=1e-4, atol=1e-4)
    for name, g in gpt_backward(dlogits, act, w64).items():
        err = np.linalg.norm(grads32[name] - g) / max(np.linalg.norm(g), 1e-30)
        assert err < 1e-3, name


def test_the_score_bound_refuses_nan_and_inf() -> None:
    model = GPTModel(TINY)
    ws = Workspace(model.gpt_weights(), 1, 4)
    qk = np.full((4, 2 * TINY.hidden_dim), 0.1, np.float32)
    assert _scores_bounded(ws, qk.copy())
    for bad in (np.nan, np.inf):
        broken = qk.copy()
        broken[2, 3] = bad
        with np.errstate(invalid="ignore"):  # inf·0 in the sum of squares
            assert not _scores_bounded(ws, broken)
