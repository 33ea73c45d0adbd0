"""`minillm serve` and `minillm chat`: start, answer, stop cleanly, refuse bad model files."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from serving_helpers import TINY

from framework import serving
from framework.model import GPTModel, init_weights, model_save
from grader.cli import cli


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "tiny.bin"
    model = GPTModel(TINY)
    init_weights(model, seed=0)
    model_save(model, path)
    return path


def start(*args: str) -> tuple[subprocess.Popen[str], str]:
    """`minillm serve ARGS --port 0` in a child process; its URL once it listens."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "serve", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    for _ in range(10):
        line = proc.stdout.readline()
        if m := re.search(r"chat page\s+(http://127\.0\.0\.1:\d+)/", line):
            return proc, m.group(1)
    proc.kill()
    raise AssertionError(
        f"no URL in the banner; stderr: {proc.stderr.read() if proc.stderr else ''}"
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_serve_answers_then_stops_cleanly_on_a_signal(model_file: Path, sig: int) -> None:
    proc, url = start(str(model_file))
    try:
        with urllib.request.urlopen(url + "/health", timeout=5) as r:
            assert json.load(r) == {"status": "ok", "model": "tiny", "busy": False}
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped." in out and "Traceback" not in err
    assert '"GET /health" 200' in err  # the request log goes to stderr


def test_serve_refuses_a_taken_port(model_file: Path) -> None:
    proc, url = start(str(model_file))
    try:
        port = url.rsplit(":", 1)[1]
        result = CliRunner().invoke(cli, ["serve", str(model_file), "--port", port])
        assert result.exit_code == 1 and f"cannot listen on 127.0.0.1:{port}" in result.output
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("command", ["serve", "chat"])
def test_a_malformed_model_file_is_refused_with_a_message(tmp_path: Path, command: str) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"not a model file, but 32 bytes or more long")
    result = CliRunner().invoke(cli, [command, str(bad)])
    assert result.exit_code == 1
    assert "cannot load the model" in result.output and "wrong magic" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("command", ["serve", "chat"])
def test_without_a_model_the_shipped_one_is_used_or_training_is_suggested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setattr(serving, "SHIPPED_MODEL", tmp_path / "none.bin")
    result = CliRunner().invoke(cli, [command])
    assert result.exit_code == 1
    assert (
        "minillm train" in result.output and f"minillm {command} path/to/model.bin" in result.output
    )


def test_a_model_and_a_vocabulary_that_do_not_fit_are_refused(
    model_file: Path, tmp_path: Path
) -> None:
    from framework.bpe_tokenizer import BPETokenizer

    vocab = tmp_path / "v.json"
    BPETokenizer.train("hello hello world " * 20, 10).save(vocab)
    result = CliRunner().invoke(cli, ["chat", str(model_file), "--vocab", str(vocab)])
    assert result.exit_code == 1 and "do not belong together" in result.output


def test_chat_repl_streams_replies_and_obeys_its_commands(model_file: Path) -> None:
    script = (
        "\n".join(
            [
                "你好",
                "/temp 0",
                "/topk 5",
                "/len 4",
                "/system Be brief.",
                "hello",
                "/help",
                "/reset",
                "/len zero",
                "/what",
                "",
                "again",
            ]
        )
        + "\n"
    )
    result = CliRunner().invoke(cli, ["chat", str(model_file), "--seed", "1"], input=script)
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("miniLLM chat with tiny (context 128 tokens)")
    assert out.count("Bot: ") == 3  # one per message; EOF ended the chat
    for said in (
        "temperature = 0.0",
        "top_k = 5",
        "max_tokens = 4",
        "system prompt: 'Be brief.'",
        "/topk [K]",
        "conversation forgotten",
        "unknown command /what",
    ):
        assert said in out, said
    assert "/len must be a number >= 1" in out


def test_chat_replies_follow_the_settings(model_file: Path) -> None:
    def reply(*commands: str) -> str:
        result = CliRunner().invoke(
            cli, ["chat", str(model_file)], input="\n".join([*commands, "hi", "/quit", "never"])
        )
        assert result.exit_code == 0, result.output
        return result.output.split("Bot: ", 1)[1].split("\n> ", 1)[0]

    greedy = reply("/temp 0", "/len 6")
    assert greedy == reply("/temp 0", "/len 6")  # greedy: the same reply every time
    assert len(reply("/temp 0", "/len 2").encode()) <= len(greedy.encode())


def test_serve_allow_host_and_cors_options(model_file: Path) -> None:
    origin = "http://localhost:3000"
    proc, url = start(str(model_file), "--allow-host", "chat.lan", "--cors", origin, "-q")
    try:
        port = url.rsplit(":", 1)[1]
        conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=5)
        conn.request("GET", "/health", headers={"Host": "chat.lan", "Origin": origin})
        allowed = conn.getresponse()
        assert allowed.status == 200
        assert allowed.getheader("Access-Control-Allow-Origin") == origin
        allowed.read()
        conn.request("GET", "/health", headers={"Host": "evil.example"})
        refused = conn.getresponse()
        assert refused.status == 421 and b"--allow-host" in refused.read()
        conn.close()
    finally:
        proc.terminate()
        proc.wait(10)
    bad = CliRunner().invoke(cli, ["serve", str(model_file), "--allow-host", "a b:x"])
    assert bad.exit_code == 2 and "--allow-host" in bad.output
