"""framework.generate: the cached decode equals the uncached one, and the loop's rules."""

from __future__ import annotations

import numpy as np
import pytest

from framework.config import ModelConfig, tiny_config
from framework.generate import (
    Decoder,
    GenerateConfig,
    generate,
    generate_stream,
)
from framework.model import GPTModel, init_weights
from framework.text_stream import TextStream
from framework.tokenizer import EOS_ID, ByteTokenizer

TOK = ByteTokenizer()


@pytest.fixture(scope="module")
def model() -> GPTModel:
    m = GPTModel(tiny_config())  # max_seq_len 64
    init_weights(m, seed=7)
    # init std 0.02 gives near-uniform logits; sharpen them so greedy paths are not ties
    m.lm_head.numpy()[...] *= 50.0
    return m


def constant_model(logits: np.ndarray, vocab_size: int = 260) -> GPTModel:
    """A model whose logits are `logits` whatever the input (final LN outputs e_0)."""
    m = GPTModel(ModelConfig(vocab_size, 32, 2, 1, 64, 64))
    init_weights(m, seed=0)
    m.final_ln.gamma.numpy()[...] = 0.0
    m.final_ln.beta.numpy()[...] = np.eye(32)[0]
    m.lm_head.numpy()[...] = 0.0
    m.lm_head.numpy()[0] = logits
    return m


def reference_logits(model: GPTModel, window: list[int]) -> np.ndarray:
    return model.forward(window).numpy()[-1]


def test_cached_and_uncached_logits_agree_at_every_step(model: GPTModel) -> None:
    prompt = [2, *TOK.encode("The cache must not change a single logit. ")]
    cached, plain = Decoder(model, prompt), Decoder(model, prompt, use_cache=False)
    rng = np.random.default_rng(0)
    for _ in range(90):  # 43-token prompt + 90 > 64: the window slides twice
        a, b = cached.logits(), plain.logits()
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)
        np.testing.assert_allclose(
            a, reference_logits(model, cached.ids[cached.start :]), atol=1e-5
        )
        tok = int(rng.integers(4, 260))
        cached.push(tok)
        plain.push(tok)
    assert cached.slides == plain.slides >= 2


def test_thirty_greedy_tokens_identical_with_and_without_cache(model: GPTModel) -> None:
    cfg = GenerateConfig(max_new_tokens=30, temperature=0, stop_at_eos=False)
    with_cache = generate(model, TOK, "hello", cfg)
    cfg.use_cache = False
    without = generate(model, TOK, "hello", cfg)
    assert len(with_cache.token_ids) == 30
    assert with_cache.token_ids == without.token_ids
    ids = [2, *TOK.encode("hello")]
    for tok in with_cache.token_ids:  # a plain loop: full forward, argmax of the last row
        assert tok == int(np.argmax(reference_logits(model, ids)))
        ids.append(tok)


def test_sampling_is_reproducible_from_the_seed(model: GPTModel) -> None:
    cfg = GenerateConfig(max_new_tokens=25, temperature=1.5, top_k=0, top_p=1.0, seed=11)
    a = generate(model, TOK, "abc", cfg)
    b = generate(model, TOK, "abc", cfg)
    c = generate(model, TOK, "abc", cfg, rng=np.random.default_rng(11))
    d = generate(model, TOK, "abc", GenerateConfig(max_new_tokens=25, temperature=1.5, seed=12))
    assert a.token_ids == b.token_ids == c.token_ids
    assert a.token_ids != d.token_ids
    assert len(set(a.token_ids)) > 5  # really sampled, not one repeated token


def test_window_slides_past_max_seq_len(model: GPTModel) -> None:
    cfg = GenerateConfig(max_new_tokens=150, temperature=0, stop_at_eos=False, window_keep=16)
    out = generate(model, TOK, "x" * 10, cfg)
    assert len(out.token_ids) == 150
    # the 54th new token makes 65 > 64 and keeps 16; then every 49th token slides again
    assert out.slides == 2
    d = Decoder(model, [2] + [TOK.encode("x")[0]] * 10, window_keep=16)
    for tok in out.token_ids:
        assert tok == int(np.argmax(reference_logits(model, d.ids[d.start :])))
        assert d.logits().shape == (260,)
        d.push(tok)
        assert d.position <= 64


def test_long_prompt_truncated_from_the_left(model: GPTModel) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(100))
    out = generate(model, TOK, text, GenerateConfig(max_new_tokens=3, temperature=0))
    assert out.prompt_truncated == 101 - 64
    assert out.prompt_ids == [2, *TOK.encode(text)][-64:]
    assert len(out.token_ids) == 3


def test_stops_at_eos_and_at_stop_ids() -> None:
    logits = np.full(260, -5.0, dtype=np.float32)
    logits[EOS_ID] = 5.0
    out = generate(constant_model(logits), TOK, "q", GenerateConfig(temperature=0))
    assert (out.token_ids, out.text, out.stop_reason) == ([], "", "eos")
    cfg = GenerateConfig(temperature=0, stop_at_eos=False, max_new_tokens=4)
    out = generate(constant_model(logits), TOK, "q", cfg)
    assert out.token_ids == [EOS_ID] * 4 and out.stop_reason == "length"
    logits[EOS_ID], logits[TOK.encode("z")[0]] = -5.0, 5.0
    out = generate(constant_model(logits), TOK, "q", GenerateConfig(temperature=0, stop_ids=(126,)))
    assert out.stop_reason == "stop" and out.token_ids == []


def test_stop_string_ends_the_text_before_it() -> None:
    logits = np.full(260, -30.0, dtype=np.float32)
    a, b = TOK.encode("a")[0], TOK.encode("b")[0]
    logits[[a, b]] = 0.0  # 'a' or 'b', half each
    cfg = GenerateConfig(max_new_tokens=200, seed=2, stop=("bb",), top_k=0, top_p=1.0)
    out = generate(constant_model(logits), TOK, "q", cfg)
    assert (out.text, out.stop_reason) == ("aaba", "stop")  # seed 2 draws a a b a b b
    assert TOK.decode(out.token_ids) == "aababb"
    pieces = list(generate_stream(constant_model(logits), TOK, "q", cfg))
    assert "".join(pieces) == out.text
    assert all(pieces)


def test_only_ids_the_tokenizer_knows_are_sampled() -> None:
    logits = np.zeros(300, dtype=np.float32)
    logits[260:] = 10.0  # ids a ByteTokenizer cannot decode, by far the most likely
    out = generate(constant_model(logits, 300), TOK, "q", GenerateConfig(max_new_tokens=50, seed=1))
    assert out.token_ids and max(out.token_ids) < 260


def test_text_stream_keeps_utf8_characters_whole() -> None:
    s = TextStream(())
    pieces = [s.feed(bytes([b])) for b in "你好".encode()]
    assert pieces == ["", "", "你", "", "", "好"]
    s = TextStream(())
    assert s.feed("é".encode()[:1]) == "" and s.finish() == "\ufffd"


def test_text_stream_holds_back_a_possible_stop_string() -> None:
    s = TextStream(("<|end|>",))
    assert s.feed(b"hi <|") == "hi "
    assert s.feed(b"en") == ""
    assert s.feed(b"x") == "<|enx"  # not a stop string after all
    assert s.feed(b" <|end") == " "
    assert s.feed(b"|> more") == "" and s.stopped
    assert s.text == "hi <|enx " and s.finish() == ""


def test_streamed_pieces_join_to_the_result(model: GPTModel) -> None:
    cfg = GenerateConfig(max_new_tokens=40, seed=3, stop_at_eos=False)
    pieces = list(generate_stream(model, TOK, "你好", cfg))
    seen: list[str] = []
    out = generate(model, TOK, "你好", cfg, on_text=seen.append)
    assert "".join(pieces) == out.text == "".join(seen) == TOK.decode(out.token_ids)
    assert len(pieces) > 1


def test_prompt_as_ids_and_zero_new_tokens(model: GPTModel) -> None:
    out = generate(model, TOK, [2, 70, 71], GenerateConfig(max_new_tokens=0))
    assert (out.prompt_ids, out.token_ids, out.text, out.stop_reason) == (
        [2, 70, 71],
        [],
        "",
        "length",
    )


@pytest.mark.parametrize(
    ("kwargs", "exc", "word"),
    [
        ({"max_new_tokens": -1}, ValueError, "max_new_tokens"),
        ({"max_new_tokens": 2.0}, TypeError, "max_new_tokens"),
        ({"temperature": "hot"}, TypeError, "temperature"),
        ({"top_k": 1.5}, TypeError, "top_k"),
        ({"repetition_penalty": 0.0}, ValueError, "repetition_penalty"),
        ({"stop": ("",)}, ValueError, "stop"),
        ({"window_keep": 0}, ValueError, "window_keep"),
        ({"seed": -3}, ValueError, "seed"),
    ],
)
def test_bad_config_is_refused(kwargs: dict[str, object], exc: type[Exception], word: str) -> None:
    with pytest.raises(exc, match=word):
        GenerateConfig(**kwargs).validate()  # type: ignore[arg-type]


def test_bad_prompts_are_refused(model: GPTModel) -> None:
    with pytest.raises(ValueError, match="empty"):
        generate(model, TOK, "", GenerateConfig(add_bos=False))
    with pytest.raises(ValueError, match="prompt id"):
        generate(model, TOK, [2, 999])
    with pytest.raises(TypeError, match="prompt"):
        generate(model, TOK, [2, 3.5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="model"):
        Decoder("not a model", [2])  # type: ignore[arg-type]
