"""`minillm generate`: streams the framework's generation, refuses bad files with a message."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from framework.config import tiny_config
from framework.generate import GenerateConfig, generate
from framework.model import GPTModel, init_weights, model_save
from framework.tokenizer import ByteTokenizer
from grader.cli import cli


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = GPTModel(tiny_config())
    init_weights(model, seed=3)
    path = tmp_path_factory.mktemp("gen") / "tiny.bin"
    model_save(model, path)
    return path


def test_prints_what_the_framework_generates(model_file: Path) -> None:
    args = ["generate", str(model_file), "--prompt", "Hello", "-n", "25", "--seed", "4"]
    out = CliRunner().invoke(cli, [*args, "--temperature", "0.7", "--top-k", "10"])
    assert out.exit_code == 0, out.output
    from framework.model import model_load

    cfg = GenerateConfig(25, 0.7, 10, seed=4)
    want = generate(model_load(model_file), ByteTokenizer(), "Hello", cfg)
    assert out.stdout == want.text + "\n"
    assert f"[{len(want.token_ids)} tokens in" in out.stderr
    assert f"stopped: {want.stop_reason}" in out.stderr


def test_greedy_with_and_without_cache_print_the_same(model_file: Path) -> None:
    base = ["generate", str(model_file), "-p", "abc", "-n", "30", "-t", "0"]
    a = CliRunner().invoke(cli, base)
    b = CliRunner().invoke(cli, [*base, "--no-cache"])
    assert a.exit_code == b.exit_code == 0
    assert a.stdout == b.stdout


def test_prompt_from_stdin_and_stop_string(model_file: Path) -> None:
    out = CliRunner().invoke(
        cli, ["generate", str(model_file), "-p", "-", "-n", "40", "--seed", "1"], input="Hi"
    )
    assert out.exit_code == 0
    first = out.stdout[:-1]
    assert len(first) > 2
    stop = first[2:4]
    out = CliRunner().invoke(
        cli,
        ["generate", str(model_file), "-p", "Hi", "-n", "40", "--seed", "1", "--stop", stop],
    )
    assert out.stdout == first[: first.index(stop)] + "\n"
    assert "stopped: stop" in out.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "truncated"),
        (b"XXXX" + bytes(60), "wrong magic"),
        (b"MLLM"[::-1] + (9).to_bytes(4, "little") + bytes(24), "unknown version"),
    ],
)
def test_a_malformed_model_file_is_refused_with_a_message(
    tmp_path: Path, content: bytes, message: str
) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(content)
    out = CliRunner().invoke(cli, ["generate", str(bad), "-p", "x"])
    assert out.exit_code == 1
    assert "cannot load the model" in out.output and message in out.output
    assert "Traceback" not in out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)


def test_missing_file_and_bad_options_are_refused(model_file: Path) -> None:
    out = CliRunner().invoke(cli, ["generate", "no/such/model.bin"])
    assert out.exit_code == 1 and "no such model file" in out.output
    out = CliRunner().invoke(cli, ["generate", str(model_file), "--max-new-tokens", "-1"])
    assert out.exit_code == 2
    out = CliRunner().invoke(cli, ["generate", str(model_file), "--repetition-penalty", "0"])
    assert out.exit_code == 2


@pytest.mark.parametrize(
    ("option", "value"),
    [("--top-p", "1.5"), ("--top-p", "0"), ("--top-k", "-1"), ("--temperature", "-0.5")],
)
def test_sampling_settings_out_of_range_are_refused_as_the_api_does(
    model_file: Path, option: str, value: str
) -> None:
    out = CliRunner().invoke(cli, ["generate", str(model_file), "-p", "x", option, value])
    assert out.exit_code == 2, out.output
    assert option in out.output and "range" in out.output


def test_a_vocabulary_that_does_not_fit_is_refused(model_file: Path, tmp_path: Path) -> None:
    from framework.bpe_tokenizer import BPETokenizer

    vocab = tmp_path / "v.json"
    BPETokenizer.train("ab ab ab abc abc", 3).save(vocab)
    out = CliRunner().invoke(cli, ["generate", str(model_file), "--vocab", str(vocab)])
    assert out.exit_code == 1 and "cannot load the model" in out.output
    assert "Traceback" not in out.output


def test_the_vocabulary_beside_the_model_is_used(tmp_path: Path) -> None:
    from framework.bpe_tokenizer import BPETokenizer
    from framework.config import ModelConfig

    tok = BPETokenizer.train("hello hello world world hello", 5)
    model = GPTModel(ModelConfig(tok.vocab_size, 32, 2, 1, 64, 32))
    init_weights(model, seed=1)
    path = tmp_path / "bpe.bin"
    model_save(model, path)
    tok.save(tmp_path / "bpe.vocab.json")
    out = CliRunner().invoke(cli, ["generate", str(path), "-p", "hello", "-n", "8", "-t", "0"])
    assert out.exit_code == 0, out.output
    want = generate(model, tok, "hello", GenerateConfig(8, temperature=0))
    assert out.stdout == want.text + "\n"


def test_tokens_are_printed_while_generation_goes_on(model_file: Path) -> None:
    """The first characters arrive long before a 100,000-token run could end."""
    exe = Path(sys.executable).parent / "minillm"
    cmd = [str(exe), "generate", str(model_file), "-p", "a", "-n", "100000", "--ignore-eos"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        got, deadline = b"", time.monotonic() + 60
        while len(got) < 20 and time.monotonic() < deadline:
            got += proc.stdout.read() or b""
            time.sleep(0.05)
        assert len(got) >= 20, "no streamed output within 60 s"
        assert proc.poll() is None, "the run ended: the output was not streamed"
    finally:
        proc.kill()
        proc.wait()


def test_seeded_runs_repeat(model_file: Path) -> None:
    args = ["generate", str(model_file), "-p", "q", "-n", "15", "--seed", "9", "--top-k", "0"]
    a, b = CliRunner().invoke(cli, args), CliRunner().invoke(cli, args)
    assert a.stdout == b.stdout and len(np.unique(list(a.stdout))) > 3
