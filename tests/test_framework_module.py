"""framework.module and framework.validate: named parameters in file order, state, decay
policy, and one way of rejecting bad constructor arguments across the framework."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from framework import (
    FFN,
    Embedding,
    GPTModel,
    KVCache,
    LayerNorm,
    MultiHeadAttention,
    TransformerBlock,
    tiny_config,
)
from framework.validate import check_rng, non_negative_int, positive_int

# Every framework constructor that takes sizes, with valid sizes; each case breaks one.
CONSTRUCTORS: list[tuple[str, Callable[..., object], tuple[object, ...]]] = [
    ("MultiHeadAttention", MultiHeadAttention, (8, 2)),
    ("Embedding", Embedding, (8, 4, 16)),
    ("LayerNorm", LayerNorm, (8,)),
    ("FFN", FFN, (8, 32)),
    ("TransformerBlock", TransformerBlock, (8, 2, 32)),
    ("KVCache", KVCache, (2, 16, 8)),
]


@pytest.mark.parametrize(("label", "ctor", "args"), CONSTRUCTORS, ids=[c[0] for c in CONSTRUCTORS])
def test_constructors_reject_a_float_size_with_the_same_type_error(
    label: str, ctor: Callable[..., object], args: tuple[object, ...]
) -> None:
    with pytest.raises(TypeError, match=r"^\w+ must be a positive int, got float 8\.0$"):
        ctor(8.0, *args[1:])


@pytest.mark.parametrize(("label", "ctor", "args"), CONSTRUCTORS, ids=[c[0] for c in CONSTRUCTORS])
@pytest.mark.parametrize("bad", [0, -3])
def test_constructors_reject_non_positive_sizes_with_value_error(
    label: str, ctor: Callable[..., object], args: tuple[object, ...], bad: int
) -> None:
    for i in range(len(args)):
        broken = (*args[:i], bad, *args[i + 1 :])
        with pytest.raises(ValueError, match=rf"must be a positive int, got {bad}$"):
            ctor(*broken)


def test_mha_and_embedding_reject_8_point_0_identically() -> None:
    with pytest.raises(TypeError) as mha:
        MultiHeadAttention(8.0, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError) as emb:
        Embedding(8.0, 4, 16)  # type: ignore[arg-type]
    assert str(mha.value).replace("hidden_dim", "X") == str(emb.value).replace("vocab_size", "X")


@pytest.mark.parametrize("value", [True, "8", None, 8.5, np.float32(8)])
def test_positive_int_rejects_non_ints(value: object) -> None:
    with pytest.raises(TypeError, match="size must be a positive int"):
        positive_int(value, "size")


def test_validate_helpers_accept_numpy_ints_and_reject_bad_rng() -> None:
    assert positive_int(np.int64(3), "n") == 3 and type(positive_int(np.int64(3), "n")) is int
    assert non_negative_int(0, "n") == 0
    with pytest.raises(ValueError, match="n must be an int >= 0, got -1"):
        non_negative_int(-1, "n")
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator, got int"):
        check_rng(0)


# -- Module ---------------------------------------------------------------------------------
def test_parameters_are_named_by_attribute_path_in_file_order() -> None:
    names = [n for n, _ in GPTModel(tiny_config()).parameters()]
    block = [
        "ln1.gamma", "ln1.beta", "attn.w_q", "attn.w_k", "attn.w_v", "attn.w_o",
        "ln2.gamma", "ln2.beta", "ffn.w1", "ffn.b1", "ffn.w2", "ffn.b2",
    ]  # fmt: skip
    want = [
        "embedding.token_embedding",
        "embedding.position_embedding",
        *(f"blocks.{i}.{n}" for i in range(2) for n in block),
        "final_ln.gamma",
        "final_ln.beta",
        "lm_head",
    ]
    assert names == want


def test_parameters_are_the_module_tensors_themselves() -> None:
    model = GPTModel(tiny_config())
    params = dict(model.parameters())
    assert params["blocks.1.attn.w_o"] is model.blocks[1].attn.w_o
    assert params["lm_head"] is model.lm_head
    model.blocks[0].ffn.b1 = model.blocks[0].ffn.b1.copy()  # a re-bound attribute is seen
    assert dict(model.parameters())["blocks.0.ffn.b1"] is model.blocks[0].ffn.b1


def test_num_parameters_of_each_layer() -> None:
    assert LayerNorm(64).num_parameters() == 128
    assert FFN(64, 256).num_parameters() == 2 * 64 * 256 + 256 + 64
    assert MultiHeadAttention(64, 4).num_parameters() == 4 * 64 * 64
    assert TransformerBlock(64, 4, 256).num_parameters() == 49_728
    assert Embedding(260, 64, 128).num_parameters() == 24_832


def test_state_dict_is_a_copy_and_load_state_writes_in_place() -> None:
    model = GPTModel(tiny_config())
    state = model.state_dict()
    assert list(state) == [n for n, _ in model.parameters()]
    state["lm_head"][0, 0] = 5.0
    assert model.lm_head.numpy()[0, 0] == 0.0  # a copy
    tensor = model.lm_head
    model.load_state(state)
    assert model.lm_head is tensor and tensor.numpy()[0, 0] == 5.0


def test_load_state_rejects_missing_unexpected_and_misshaped_entries_without_writing() -> None:
    model = GPTModel(tiny_config())
    state = model.state_dict()
    state["lm_head"] = state["lm_head"] + 1
    missing = {k: v for k, v in state.items() if k != "final_ln.beta"}
    with pytest.raises(ValueError, match=r"missing \['final_ln.beta'\], unexpected \[\]"):
        model.load_state(missing)
    with pytest.raises(ValueError, match=r"unexpected \['extra'\]"):
        model.load_state({**state, "extra": np.zeros(1)})
    bad = {**state, "blocks.0.ffn.w1": np.zeros((3, 3))}
    with pytest.raises(ValueError, match=r"blocks.0.ffn.w1.*shape \(32, 128\), got \(3, 3\)"):
        model.load_state(bad)
    with pytest.raises(ValueError, match="real numbers"):
        model.load_state({**state, "lm_head": np.full(state["lm_head"].shape, "a")})
    assert not model.lm_head.numpy().any()  # nothing written by any failed call


def test_decay_policy_no_decay_for_positions_layernorms_and_biases() -> None:
    model = GPTModel(tiny_config())
    no_decay = {n for n, _ in model.parameters() if not model.decays(n)}
    assert no_decay == {
        "embedding.position_embedding",
        "final_ln.gamma",
        "final_ln.beta",
        *(f"blocks.{i}.{n}" for i in range(2) for n in
          ("ln1.gamma", "ln1.beta", "ln2.gamma", "ln2.beta", "ffn.b1", "ffn.b2")),
    }  # fmt: skip
    assert model.decays("embedding.token_embedding") and model.decays("blocks.1.attn.w_v")
    with pytest.raises(KeyError, match="nope"):
        model.decays("blocks.0.nope")
    with pytest.raises(KeyError):
        model.decays("blocks.0")  # a module, not a parameter
