"""framework.config and framework.model: presets, the GPT forward, init, and the model file
(byte layout, round trip, and every way a file can be refused)."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest

from framework import (
    GPTModel,
    ModelConfig,
    default_config,
    init_weights,
    medium_config,
    model_load,
    model_save,
    tiny_config,
)
from framework.gpt import parameter_shapes
from framework.model import ModelFileError

PRESETS = [
    (default_config, (260, 64, 4, 4, 256, 128), 240_512),
    (tiny_config, (260, 32, 2, 2, 128, 64), 43_904),
    (medium_config, (260, 128, 4, 6, 512, 256), 1_286_144),
]


@pytest.mark.parametrize(("preset", "fields", "count"), PRESETS)
def test_presets_and_parameter_counts(preset, fields, count) -> None:  # type: ignore[no-untyped-def]
    cfg = preset()
    assert cfg.as_tuple() == fields
    model = GPTModel(cfg)
    assert model.num_parameters() == count
    assert [(n, t.shape) for n, t in model.parameters()] == parameter_shapes(cfg)


@pytest.mark.parametrize(
    ("field", "value", "exc", "match"),
    [
        ("hidden_dim", 64.0, TypeError, "hidden_dim must be a positive int, got float 64.0"),
        ("num_layers", True, TypeError, "num_layers must be a positive int, got bool"),
        ("vocab_size", "260", TypeError, "vocab_size"),
        ("ffn_dim", 0, ValueError, "ffn_dim must be a positive int, got 0"),
        ("max_seq_len", -1, ValueError, "max_seq_len"),
        ("num_heads", 5, ValueError, r"hidden_dim \(64\) must be divisible by num_heads \(5\)"),
    ],
)
def test_config_validate_and_model_reject_bad_fields(field, value, exc, match) -> None:  # type: ignore[no-untyped-def]
    cfg = default_config()
    setattr(cfg, field, value)
    with pytest.raises(exc, match=match):
        cfg.validate()
    with pytest.raises(exc, match=match):
        GPTModel(cfg)


def test_model_copies_its_config_and_rejects_non_configs() -> None:
    cfg = tiny_config()
    model = GPTModel(cfg)
    cfg.num_layers = 7
    assert model.config.num_layers == 2 and len(model.blocks) == 2
    with pytest.raises(TypeError, match="config must be a ModelConfig"):
        GPTModel((260, 32, 2, 2, 128, 64))  # type: ignore[arg-type]


def test_model_has_the_documented_layers() -> None:
    model = GPTModel(tiny_config())
    assert model.lm_head.shape == (32, 260)  # [H, V], not tied to the token table
    assert model.embedding.token_embedding.shape == (260, 32)
    assert model.embedding.position_embedding.shape == (64, 32)
    assert len(model.blocks) == 2 and model.final_ln.gamma.shape == (32,)


# -- init and forward -------------------------------------------------------------------------
def test_init_weights_is_seeded_and_follows_the_c_draw_order() -> None:
    a, b = GPTModel(tiny_config()), GPTModel(tiny_config())
    init_weights(a, 3)
    init_weights(b, 3)
    for (name, ta), (_, tb) in zip(a.parameters(), b.parameters(), strict=True):
        np.testing.assert_array_equal(ta.numpy(), tb.numpy(), err_msg=name)
    rng = np.random.default_rng(3)
    first = rng.normal(0, 0.02, (260, 32)).astype(np.float32)  # the token table comes first
    np.testing.assert_array_equal(a.embedding.token_embedding.numpy(), first)
    second = rng.normal(0, 0.02, (32, 32)).astype(np.float32)  # then layer 0's W_q
    np.testing.assert_array_equal(a.blocks[0].attn.w_q.numpy(), second)
    assert a.blocks[1].ln2.gamma.numpy().tolist() == [1.0] * 32
    assert not a.blocks[1].ffn.b1.numpy().any()
    init_weights(b, 4)
    assert not np.array_equal(a.lm_head.numpy(), b.lm_head.numpy())
    with pytest.raises(ValueError, match="seed"):
        init_weights(a, -1)
    with pytest.raises(TypeError, match="model must be a GPTModel"):
        init_weights(a.blocks[0], 0)  # type: ignore[arg-type]


def seeded(seed: int = 0, cfg: ModelConfig | None = None) -> GPTModel:
    model = GPTModel(cfg or tiny_config())
    init_weights(model, seed)
    return model


def test_forward_matches_a_manual_composition_of_the_layers() -> None:
    model = seeded()
    ids = [2, 76, 105, 105, 9]
    x = model.embedding.forward(ids).numpy()
    from framework import create_causal_mask

    for block in model.blocks:
        x = block.forward(x, create_causal_mask(len(ids))).numpy()
    want = model.final_ln.forward(x).numpy() @ model.lm_head.numpy()
    got = model.forward(ids)
    assert got.shape == (5, 260) and got.data.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_one_sequence_and_a_batch_agree_across_query_blocks() -> None:
    # one sequence's attention runs in query blocks of 64, a batch's in blocks of 32
    # (`framework.workspace`): the same logits from both layouts, and from the layers
    from framework import default_config
    from framework.workspace import QUERY_BLOCK, Workspace

    model = seeded(cfg=default_config())
    ids = np.random.default_rng(3).integers(0, 260, size=(2, 128))
    w = model.gpt_weights()
    assert Workspace(w, 1, 128, keep=False).blocks == [(0, 2 * QUERY_BLOCK), (2 * QUERY_BLOCK, 128)]
    assert len(Workspace(w, 2, 128, keep=False).blocks) == 128 // QUERY_BLOCK
    batch = model.forward_batch(ids, keep_activations=False)  # (2, 128, V)
    for row in range(2):
        alone = model.forward(ids[row]).numpy()  # (128, V)
        np.testing.assert_allclose(alone, batch[row], rtol=1e-5, atol=1e-5)


def test_forward_is_causal_and_start_pos_shifts_positions() -> None:
    model = seeded()
    a = model.forward([5, 6, 7, 8]).numpy()
    b = model.forward(np.array([5, 6, 7, 99])).numpy()
    np.testing.assert_array_equal(a[:3], b[:3])
    assert np.abs(a[3] - b[3]).max() > 1e-4
    shifted = model.forward([5, 6, 7, 8], start_pos=3).numpy()
    assert np.abs(shifted - a).max() > 1e-4


@pytest.mark.parametrize(
    ("ids", "start", "exc", "match"),
    [
        ([1, 260], 0, ValueError, "outside"),
        ([], 0, ValueError, "empty"),
        (list(range(65)), 0, ValueError, "max_seq_len is 64"),
        ([1, 2], 63, ValueError, "max_seq_len is 64"),
        ([1.5], 0, TypeError, "ids"),
    ],
)
def test_forward_rejects_bad_ids(ids, start, exc, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=match):
        seeded().forward(ids, start_pos=start)


# -- save / load ------------------------------------------------------------------------------
def test_default_file_is_the_c_format_byte_for_byte(tmp_path: Path) -> None:
    model = seeded(1, default_config())
    path = tmp_path / "model.bin"
    model_save(model, path)
    raw = path.read_bytes()
    assert len(raw) == 962_080
    assert raw[:32].hex() == ("4d4c4c4d01000000040100004000000004000000040000000001000080000000")
    body = np.concatenate([t.numpy().astype("<f4").ravel() for _, t in model.parameters()])
    assert raw[32:] == body.tobytes()
    h, v = 64, 260
    lm_head = np.frombuffer(raw[-4 * h * v :], "<f4").reshape(h, v)
    np.testing.assert_array_equal(lm_head, model.lm_head.numpy())
    assert sorted(os.listdir(tmp_path)) == ["model.bin"]  # no temporary file left behind


def test_round_trip_keeps_every_tensor_and_the_logits(tmp_path: Path) -> None:
    model = seeded(2)
    rng = np.random.default_rng(0)
    for _, t in model.parameters():  # LayerNorms and biases differ too: a swap would show
        t.numpy()[...] += rng.normal(0, 0.1, size=t.shape).astype(np.float32)
    model_save(model, tmp_path / "m.bin")
    loaded = model_load(str(tmp_path / "m.bin"))
    assert loaded.config == model.config
    for (name, a), (_, b) in zip(model.parameters(), loaded.parameters(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    ids = [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(loaded.forward(ids).numpy(), model.forward(ids).numpy())


def test_save_replaces_an_old_file_and_failure_leaves_it(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.bin"
    path.write_bytes(b"old")
    model_save(seeded(), path)
    assert path.stat().st_size == 32 + 4 * 43_904

    def boom(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    before = path.read_bytes()
    with pytest.raises(OSError, match="disk full"):
        model_save(seeded(5), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.bin"]


def write(path: Path, header: tuple[int, ...], body: bytes) -> Path:
    path.write_bytes(struct.pack("<II6i", *header) + body)
    return path


TINY = (260, 32, 2, 2, 128, 64)
TINY_BODY = 4 * 43_904


@pytest.mark.parametrize(
    ("header", "body_len", "match"),
    [
        ((0x4D4C4C4E, 1, *TINY), TINY_BODY, r"wrong magic 0x4D4C4C4E, expected 0x4D4C4C4D"),
        ((0x4D4C4C4D, 2, *TINY), TINY_BODY, "unknown version 2"),
        ((0x4D4C4C4D, 1, 260, 32, 3, 2, 128, 64), TINY_BODY, "invalid config.*divisible"),
        ((0x4D4C4C4D, 1, 260, 0, 2, 2, 128, 64), TINY_BODY, "invalid config.*hidden_dim"),
        ((0x4D4C4C4D, 1, *TINY), TINY_BODY - 4, f"truncated: {TINY_BODY + 28} bytes.*needs"),
        ((0x4D4C4C4D, 1, *TINY), TINY_BODY + 1, f"over-long: {32 + TINY_BODY + 1} bytes"),
        # a header that promises 2**31 ids must be refused by length, before any allocation
        ((0x4D4C4C4D, 1, 2**31 - 1, 2**20, 2, 2, 128, 64), 16, "truncated"),
    ],
)
def test_load_refuses_bad_files_saying_which(tmp_path: Path, header, body_len, match) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path / "bad.bin", header, bytes(body_len))
    with pytest.raises(ModelFileError, match=match):
        model_load(path)


@pytest.mark.parametrize("version", ["<I", ">I"], ids=["version-le", "version-be"])
def test_load_refuses_a_big_endian_header_at_once(tmp_path: Path, version: str) -> None:
    # 5 layers and max_seq_len 64 read little-endian: 83,886,080 layers of a valid config.
    # The length must be checked from the counts, not by listing 84 M layers' shapes.
    cfg = ModelConfig(260, 64, 4, 5, 256, 64)
    model = GPTModel(cfg)
    init_weights(model, seed=0)
    model_save(model, tmp_path / "m.bin")
    body = (tmp_path / "m.bin").read_bytes()[32:]
    header = (
        struct.pack("<I", 0x4D4C4C4D)
        + struct.pack(version, 1)
        + struct.pack(">6i", *cfg.as_tuple())
    )
    path = tmp_path / "be.bin"
    path.write_bytes(header + body)
    start = time.perf_counter()
    match = (
        "unknown version 16777216.*big-endian"
        if version == ">I"
        else rf"truncated: {32 + len(body)} bytes, the header's config needs \d+ .*"
        r"num_layers=83886080.*big-endian"
    )
    with pytest.raises(ValueError, match=match):
        model_load(path)
    assert time.perf_counter() - start < 1.0


def test_load_refuses_a_file_shorter_than_the_header(tmp_path: Path) -> None:
    (tmp_path / "short.bin").write_bytes(b"MLLM\x01\x00")
    with pytest.raises(ValueError, match="truncated: 6 bytes, less than the 32-byte header"):
        model_load(tmp_path / "short.bin")
    with pytest.raises(FileNotFoundError):
        model_load(tmp_path / "missing.bin")
