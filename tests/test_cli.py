"""The command line: exit codes, JSON result, languages, and the lab Makefile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def minillm(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=120,
    )


def test_solution_passes_with_exit_0() -> None:
    proc = minillm("verify", "lab04", "--solution")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "结果: 全部通过" in proc.stdout
    assert "\x1b[" not in proc.stdout  # not a terminal: no colour codes


def test_stubs_are_todo_with_exit_1() -> None:
    proc = minillm("verify", "4", "--lang", "en")
    assert proc.returncode == 1
    assert "[TODO]" in proc.stdout and "[PASS]" not in proc.stdout
    assert "Result: 0/" in proc.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("verify", "lab99"), "available labs: "),
        (("verify", "lab04", "--impl", "/no/such/file.py"), "does not exist"),
        (("verify", "lab04", "--lang", "fr"), "Invalid value for '--lang'"),
        (("verify",), "Missing argument"),
        (("verify", "lab04", "--json", "/no/such/dir/r.json"), "cannot write the JSON result"),
        (("verify", "lab04", "--solution", "--impl", "README.md"), "either --solution or --impl"),
    ],
)
def test_usage_errors_exit_2_with_a_message(args: tuple[str, ...], needle: str) -> None:
    proc = minillm(*args)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_json_result_has_the_documented_shape(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = minillm("verify", "lab04", "--solution", "--json", str(out), "--lang", "en")
    assert proc.returncode == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert set(doc) == {
        "schema",
        "lab",
        "title",
        "titles",
        "lang",
        "impl",
        "sandbox",
        "seed",
        "duration_s",
        "score",
        "max_score",
        "summary",
        "notes",
        "tests",
    }
    assert doc["schema"] == 2 and doc["sandbox"] in ("fork", "spawn")
    assert doc["lab"] == "lab04" and doc["title"] == "Multi-head self-attention"
    assert doc["titles"] == {"zh": "多头自注意力", "en": "Multi-head self-attention"}
    assert doc["score"] == doc["max_score"] == len(doc["tests"])
    assert set(doc["summary"]) == {
        "total",
        "passed",
        "failed",
        "todo",
        "error",
        "timeout",
        "skipped",
        "grader_error",
    }
    assert doc["summary"]["passed"] == doc["summary"]["total"] == len(doc["tests"])
    first = doc["tests"][0]
    assert set(first) == {"id", "title", "titles", "status", "points", "hidden", "checks"}
    assert set(first["checks"][0]) == {
        "name",
        "status",
        "message",
        "output",
        "output_bytes",
        "hints",
        "diagnosis",
    }
    assert first["checks"][0]["diagnosis"] is None  # a passing check names no known bug


def test_json_to_stdout_moves_the_report_to_stderr() -> None:
    proc = minillm("verify", "lab04", "--json", "-")
    doc = json.loads(proc.stdout)
    assert doc["summary"]["todo"] == doc["summary"]["total"]
    assert "[TEST 1]" in proc.stderr


def test_language_follows_the_locale() -> None:
    assert "Result:" in minillm("verify", "lab04", env={"LANG": "en_US.UTF-8", "LC_ALL": ""}).stdout
    assert "结果:" in minillm("verify", "lab04", env={"LANG": "C.UTF-8", "LC_ALL": ""}).stdout
    assert "Result:" in minillm("verify", "lab04", env={"MINILLM_LANG": "en"}).stdout


def test_list_names_every_lab() -> None:
    proc = minillm("list", "--lang", "en")
    assert proc.returncode == 0
    assert "lab04  Multi-head self-attention" in proc.stdout


def test_lab_makefile_runs_the_verify() -> None:
    venv = ROOT / ".venv" / "bin" / "minillm"
    if not venv.exists():
        pytest.skip("needs the project's .venv (make setup)")
    proc = subprocess.run(
        ["make", "-s", "test"],
        cwd=ROOT / "labs" / "lab04",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0  # stubs: short of PASS
    assert "Lab04" in proc.stdout and "[TODO]" in proc.stdout


_BLAS_PROBE = (
    "import os, sys\n"
    "import grader, numpy\n"
    "tasks = len(os.listdir('/proc/self/task')) if sys.platform == 'linux' else -1\n"
    "print(os.environ['OPENBLAS_NUM_THREADS'], tasks)\n"
)


@pytest.mark.parametrize("given", [None, "3"])
def test_the_grader_starts_one_blas_thread_unless_told(given: str | None) -> None:
    # numpy's OpenBLAS starts a spinning thread per core at import: about 0.1 s of a core
    # in every grader process, taken from the sandbox that starts beside it
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS",)}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run(
        [sys.executable, "-c", _BLAS_PROBE], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    value, tasks = done.stdout.split()
    assert value == (given or "1")
    if given is None and int(tasks) >= 0:
        assert int(tasks) == 1, "numpy started BLAS threads in a grader process"


def test_each_lazy_command_is_the_command_of_its_name() -> None:
    import importlib

    from grader.cli import LAZY_COMMANDS, cli

    for name, (module, attr) in LAZY_COMMANDS.items():
        command = getattr(importlib.import_module(module), attr)
        assert command.name == name, (name, module, attr)
        assert cli.get_command(None, name) is command  # type: ignore[arg-type]
    assert cli.get_command(None, "no-such-command") is None  # type: ignore[arg-type]


_VERIFY_IMPORTS = (
    "import sys\n"
    "from grader.cli import cli\n"
    "try:\n"
    "    cli(['verify', 'lab01', '--solution', '--lang', 'en', '--no-color'])\n"
    "except SystemExit:\n"
    "    pass\n"
    "print('commands:', *sorted(m for m in sys.modules if m.startswith('grader.commands')))\n"
)


def test_verify_imports_no_other_commands_module() -> None:
    # the verify process compiles every module it imports from source, on every run
    done = subprocess.run(
        [sys.executable, "-c", _VERIFY_IMPORTS], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "Result: all passed" in done.stdout
    assert done.stdout.splitlines()[-1] == "commands:", done.stdout.splitlines()[-1]
