"""`load_chat_model`, the one loader of generate, chat and serve: sidecar or plain model file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from framework.bpe_tokenizer import BPETokenizer
from framework.config import ModelConfig
from framework.model import GPTModel, init_weights, model_save
from framework.serving import load_chat_model
from framework.shipped import CheckpointError, meta_path, save_checkpoint
from framework.tokenizer import ByteTokenizer
from grader.cli import cli

TEXT = "hello hello world world hello " * 4


@pytest.fixture()
def checkpoint(tmp_path: Path) -> tuple[Path, Path, BPETokenizer]:
    """A small BPE checkpoint whose vocabulary is not at ``<model>.vocab.json``."""
    tok = BPETokenizer.train(TEXT, 6)
    model = GPTModel(ModelConfig(tok.vocab_size, 32, 2, 1, 64, 32))
    init_weights(model, seed=1)
    path, vocab = tmp_path / "m.bin", tmp_path / "words.json"
    save_checkpoint(model, tok, path, vocab, {"note": "test"})
    return path, vocab, tok


def _other_vocab(tmp_path: Path, merges: int = 6) -> Path:
    other = tmp_path / "other.json"
    BPETokenizer.train("abc abc abd abd " * 4, merges).save(other)
    return other


def test_the_vocabulary_the_sidecar_names_is_used(
    checkpoint: tuple[Path, Path, BPETokenizer],
) -> None:
    path, _, tok = checkpoint
    engine = load_chat_model(path)  # the old loader fell back to bytes here
    assert isinstance(engine.tokenizer, BPETokenizer) and engine.tokenizer == tok
    assert engine.name == "m"


def test_a_vocabulary_with_another_fingerprint_is_refused(
    checkpoint: tuple[Path, Path, BPETokenizer], tmp_path: Path
) -> None:
    path, _, _ = checkpoint
    other = _other_vocab(tmp_path)  # the same size, other merges
    assert BPETokenizer.load(other).vocab_size == checkpoint[2].vocab_size
    with pytest.raises(CheckpointError, match=r"other\.json is not the vocabulary"):
        load_chat_model(path, other)
    out = CliRunner().invoke(cli, ["generate", str(path), "--vocab", str(other), "-p", "x"])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert out.output.count("\n") == 1 and "other.json is not the vocabulary" in out.output


@pytest.mark.parametrize(
    ("sidecar", "message"),
    [
        ("{", "not JSON"),
        ('{"format": "something else"}', "not a minillm-checkpoint sidecar"),
        ('{"format": "minillm-checkpoint", "version": 1}', "field 'model_sha256'"),
    ],
)
@pytest.mark.parametrize("command", ["generate", "chat"])  # serve loads the same way
def test_a_malformed_sidecar_is_refused_in_one_line(
    checkpoint: tuple[Path, Path, BPETokenizer], command: str, sidecar: str, message: str
) -> None:
    path = checkpoint[0]
    meta_path(path).write_text(sidecar)
    out = CliRunner().invoke(cli, [command, str(path)])
    assert out.exit_code == 1 and out.output.count("\n") == 1, out.output
    assert "cannot load the model" in out.output and message in out.output


def test_weights_changed_behind_the_sidecar_are_refused(
    checkpoint: tuple[Path, Path, BPETokenizer],
) -> None:
    path = checkpoint[0]
    path.write_bytes(path.read_bytes()[:-4] + b"\0\0\0\0")
    with pytest.raises(CheckpointError, match="describes other weights"):
        load_chat_model(path)


def test_a_missing_vocabulary_names_the_sidecar(
    checkpoint: tuple[Path, Path, BPETokenizer],
) -> None:
    path, vocab, _ = checkpoint
    vocab.unlink()
    with pytest.raises(CheckpointError, match=r"m\.meta\.json names the vocabulary .*words"):
        load_chat_model(path)


def test_a_model_without_sidecar_loads_as_before(tmp_path: Path) -> None:
    tok = BPETokenizer.train(TEXT, 6)
    model = GPTModel(ModelConfig(tok.vocab_size, 32, 2, 1, 64, 32))
    init_weights(model, seed=0)
    plain = tmp_path / "plain.bin"
    model_save(model, plain)
    assert isinstance(load_chat_model(plain).tokenizer, ByteTokenizer)
    tok.save(tmp_path / "given.json")
    assert load_chat_model(plain, tmp_path / "given.json").tokenizer == tok
    tok.save(tmp_path / "plain.vocab.json")
    assert load_chat_model(plain).tokenizer == tok  # the file beside the model


def test_the_shipped_model_loads_through_its_sidecar_from_a_copy(tmp_path: Path) -> None:
    from framework.shipped import MODEL_FILE, VOCAB_FILE, read_meta

    for f in (MODEL_FILE, VOCAB_FILE, meta_path(MODEL_FILE)):
        shutil.copy(f, tmp_path / f.name)
    engine = load_chat_model(tmp_path / MODEL_FILE.name)  # no --vocab: the sidecar says
    assert isinstance(engine.tokenizer, BPETokenizer)
    want = json.loads(meta_path(MODEL_FILE).read_text())["vocab_fingerprint"]
    assert engine.tokenizer.fingerprint() == want == read_meta(MODEL_FILE)["vocab_fingerprint"]
