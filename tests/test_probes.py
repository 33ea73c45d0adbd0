"""Probes for code that drives a model: the forward-call log and the echoing stdin."""

from __future__ import annotations

import numpy as np
import pytest

from framework.config import tiny_config
from framework.kv_cache import KVCache
from framework.model import GPTModel, init_weights
from framework.probes import echoing_input, logged, text_file


def test_logged_model_records_each_call_and_keeps_the_weights() -> None:
    model = GPTModel(tiny_config())
    init_weights(model, seed=0)
    spy = logged(model)
    cache = KVCache(2, 64, 32)
    out = spy.forward([2, 76, 105], kv_cache=cache)
    spy.forward([33], kv_cache=cache, start_pos=3)
    spy.forward([2, 76])
    spy.forward_batch(np.array([[2, 76], [2, 77]]))
    assert np.array_equal(out.numpy(), model.forward([2, 76, 105]).numpy())
    rows = [(c["ids"], c["start_pos"], c["cache"], c["cache_len"], c["batch"]) for c in spy.calls]
    assert rows == [
        ([2, 76, 105], 0, 0, 0, False),
        ([33], 3, 0, 3, False),
        ([2, 76], 0, None, None, False),
        ([[2, 76], [2, 77]], 0, None, None, True),
    ]
    want = model.forward([2, 76, 105, 33]).numpy()[-1]
    assert np.allclose(spy.calls[1]["last_logits"], want, atol=1e-5)
    with pytest.raises(TypeError, match="must be a GPTModel"):
        logged("model")  # type: ignore[arg-type]


def test_echoing_input_echoes_what_it_hands_out() -> None:
    out = text_file()
    stdin = echoing_input("a\nb\nc", out)
    out.write("> ")
    assert stdin.readline() == "a\n"
    assert [line for line in stdin] == ["b\n", "c"]
    assert stdin.readline() == ""
    assert out.getvalue() == "> a\nb\nc\n"
    with pytest.raises(TypeError, match="text must be a str"):
        text_file(b"x")  # type: ignore[arg-type]


def test_a_loop_that_never_stops_at_eof_ends_at_once_and_says_why() -> None:
    from framework.probes import EchoingInput, ReadPastEnd, echoing_input, text_file

    stdin = echoing_input("hi\n", text_file())
    assert stdin.readline() == "hi\n"
    for _ in range(EchoingInput.EOF_READS):  # a loop may look at the end more than once
        assert stdin.readline() == ""
    with pytest.raises(ReadPastEnd, match="does not stop at EOF"):
        stdin.readline()
