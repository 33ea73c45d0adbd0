"""framework.decode_step: the folded one-token step equals the model's cached forward."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from framework.config import ModelConfig, default_config, tiny_config
from framework.decode_step import StepDecoder
from framework.generate import Decoder
from framework.kv_cache import KVCache
from framework.model import GPTModel, init_weights
from framework.probes import LoggedModel


def busy_model(config: ModelConfig, seed: int) -> GPTModel:
    """A model whose LayerNorm γ/β and biases are far from 1 and 0, so every fold counts."""
    m = GPTModel(config)
    init_weights(m, seed)
    rng = np.random.default_rng(seed)
    for name, t in m.parameters():
        if name.endswith(("gamma", "beta", ".b1", ".b2")):
            t.numpy()[...] += rng.normal(0.0, 0.5, size=t.shape)
    m.lm_head.numpy()[...] *= 20.0  # logits of a trained model's size, not near zero
    return m


def empty_cache(model: GPTModel) -> KVCache:
    c = model.config
    return KVCache(c.num_layers, c.max_seq_len, c.hidden_dim)


@pytest.mark.parametrize("config", [tiny_config(), default_config()], ids=["tiny", "default"])
def test_steps_equal_the_cached_forward_and_fill_the_cache_alike(config: ModelConfig) -> None:
    model = busy_model(config, seed=3)
    ids = np.random.default_rng(1).integers(0, config.vocab_size, size=config.max_seq_len)
    mine, ref = empty_cache(model), empty_cache(model)
    model.forward(ids[:5], kv_cache=mine)
    model.forward(ids[:5], kv_cache=ref)
    stepper = StepDecoder(model)
    for pos in range(5, config.max_seq_len):  # up to the last position
        got = stepper.step(int(ids[pos]), pos, mine)
        want = model.forward([ids[pos]], kv_cache=ref, start_pos=pos).numpy()[0]  # (V,)
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
        assert mine.lengths == ref.lengths == [pos + 1] * config.num_layers
    np.testing.assert_allclose(mine.k.numpy(), ref.k.numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(mine.v.numpy(), ref.v.numpy(), atol=1e-5, rtol=0)
    assert np.abs(got).max() > 1.0  # the comparison was not between near-zero vectors


def test_a_rewound_cache_is_overwritten_from_the_position() -> None:
    model = busy_model(tiny_config(), seed=4)
    cache = empty_cache(model)
    model.forward([5, 6, 7, 8], kv_cache=cache)
    got = StepDecoder(model).step(9, 2, cache)  # rows 2, 3 are replaced, 3 dropped
    np.testing.assert_allclose(got, model.forward([5, 6, 9]).numpy()[2], atol=1e-5, rtol=0)
    assert cache.lengths == [3] * model.config.num_layers


@pytest.mark.parametrize(
    ("token", "pos", "fill", "word"),
    [
        (260, 3, 3, "token id"),
        (-1, 3, 3, "token id"),
        (1, 64, 3, "position"),
        (1, 4, 3, "holds 3 positions"),
    ],
)
def test_bad_steps_are_refused_and_leave_the_cache_alone(
    token: int, pos: int, fill: int, word: str
) -> None:
    model = busy_model(tiny_config(), seed=5)
    cache = empty_cache(model)
    model.forward(list(range(10, 10 + fill)), kv_cache=cache)
    k, v, lengths = cache.k.numpy().copy(), cache.v.numpy().copy(), list(cache.lengths)
    with pytest.raises(ValueError, match=word):
        StepDecoder(model).step(token, pos, cache)
    assert cache.lengths == lengths
    assert np.array_equal(cache.k.numpy(), k) and np.array_equal(cache.v.numpy(), v)


def test_a_cache_of_another_model_is_refused() -> None:
    model = busy_model(tiny_config(), seed=6)
    other = KVCache(1, 64, 32)
    with pytest.raises(ValueError, match="KV cache must be"):
        StepDecoder(model).step(1, 0, other)
    with pytest.raises(TypeError, match="GPTModel"):
        StepDecoder("model")  # type: ignore[arg-type]


def test_the_decoder_takes_the_fast_path_only_for_a_plain_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = busy_model(tiny_config(), seed=8)
    calls: list[int] = []
    plain_forward = GPTModel.forward

    def counted(self: GPTModel, *args: object, **kwargs: object) -> object:
        calls.append(1)
        return plain_forward(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(GPTModel, "forward", counted)
    d = Decoder(model, [2, 40, 41])
    for tok in range(50, 60):
        d.logits()
        d.push(tok)
    assert len(calls) == 1  # the prefill only: ten steps went through the StepDecoder

    spy = LoggedModel(model)  # overrides forward: every step must reach it
    d = Decoder(spy, [2, 40, 41])
    for tok in range(50, 60):
        d.logits()
        d.push(tok)
    assert [len(c["ids"]) for c in spy.calls] == [3] + [1] * 9


@settings(max_examples=200, deadline=None)
@given(
    rows=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=160),
        elements=st.floats(-1e6, 1e6, allow_nan=False, width=64),
    )
)
def test_the_one_row_norm_is_bit_for_bit_the_batched_one(rows: np.ndarray) -> None:
    """A solo step normalises its row as a vector (faster); each row of a batch must come
    out the same, bit for bit, or a seed's reply would depend on who else is decoding."""
    stepper = _norm_stepper(rows.shape[1])
    batched = stepper._norm(rows)
    for i, row in enumerate(rows):
        assert np.array_equal(stepper._norm(row), batched[i]), (i, row)


def _norm_stepper(h: int) -> StepDecoder:
    if h not in _STEPPERS:
        _STEPPERS[h] = StepDecoder(GPTModel(ModelConfig(260, h, 1, 1, 4 * h, 8)))
    return _STEPPERS[h]


_STEPPERS: dict[int, StepDecoder] = {}
