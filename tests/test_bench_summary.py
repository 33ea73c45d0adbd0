"""bench/figures.py and bench/summary.py: recorded figures come back as one table with
their goals and met / NOT met (the code, not any timing)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import figures
import summary


@pytest.fixture
def jsonl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "figures.jsonl"
    monkeypatch.setenv("BENCH_FIGURES", str(path))
    return path


def test_recorded_figures_render_with_goal_and_verdict(jsonl: Path) -> None:
    figures.record("train step 8x64 vs torch", 1.31, "x", ">= 1.25", True)
    figures.record("BPE train time / HF", 2.8, "x", "<= 1.0", False)
    figures.record("codec decode, seeds", 3.2, "µs per generator")  # no goal
    figures.record("serve: replies the same", 1.0, "bool", "yes", True)
    table = summary.render(figures.load())
    lines = table.splitlines()
    row = {name: next(x for x in lines if name in x) for name in
           ("train step", "BPE train", "codec decode", "replies the same")}  # fmt: skip
    assert "1.31 x" in row["train step"] and ">= 1.25" in row["train step"]
    assert row["train step"].endswith("met") and "NOT" not in row["train step"]
    assert row["BPE train"].endswith("NOT met") and "<= 1.0" in row["BPE train"]
    assert row["codec decode"].endswith("-")  # for information: no verdict
    assert "yes" in row["replies the same"]
    assert "2 of 3 goals met" in table
    assert "NOT met: BPE train time / HF" in table
    # one column each: every row's value starts where the header's "value" does
    col = lines[0].index("value")
    assert all(x[col - 2 : col] == "  " for x in lines[2:] if x.startswith("  "))


def test_a_figure_measured_again_replaces_the_first(jsonl: Path) -> None:
    figures.record("verify lab04, wall", 0.7, "s", "<= 0.5 s", False)
    figures.record("verify lab04, wall", 0.3, "s", "<= 0.5 s", True)
    got = figures.load()
    assert [(f.value, f.met) for f in got] == [(0.3, True)]
    assert "1 of 1 goals met" in summary.render(got)


def test_clear_and_nothing_recorded(jsonl: Path) -> None:
    figures.record("x", 1.0, "s")
    jsonl.write_text(jsonl.read_text() + "not json\n")  # a torn line is skipped
    assert len(figures.load()) == 1
    figures.clear()
    assert figures.load() == [] and not jsonl.exists()
    assert "no figures recorded" in summary.render([])


def test_the_bpe_bench_holds_hf_to_one_thread_unless_told() -> None:
    import bpe_train

    env = {"RAYON_NUM_THREADS": "8"}
    assert bpe_train.pin_hf_threads(1, env) == "1 thread"
    assert env["RAYON_NUM_THREADS"] == "1"  # like for like with ours, which runs on one
    assert bpe_train.pin_hf_threads(2, env) == "2 threads" and env["RAYON_NUM_THREADS"] == "2"
    assert bpe_train.pin_hf_threads(0, env) == "every core"
    assert "RAYON_NUM_THREADS" not in env  # a user's own value would pin it: dropped


def test_the_bpe_bench_refuses_a_thread_count_below_zero() -> None:
    import argparse

    import bpe_train

    assert bpe_train._threads("0") == 0 and bpe_train._threads("3") == 3
    for bad in ("-1", "two", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="expected 0"):
            bpe_train._threads(bad)


def test_the_machine_line_names_the_cpu_and_each_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    import machine

    monkeypatch.setattr(machine, "_cpuinfo", lambda: {"model name": "Xeon X", "flags": "avx2 avx"})
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    line = machine.machine()
    assert line.startswith("cpu Xeon X, ") and ", avx2;" in line, line
    assert "; numpy BLAS " in line and "torch" not in line  # torch only when imported

    class Config:
        @staticmethod
        def show() -> str:
            return "  - CPU capability usage: AVX512\n  - Build settings: BLAS_INFO=mkl, X=1\n"

    monkeypatch.setitem(sys.modules, "torch", type("torch", (), {"__config__": Config}))
    assert machine.machine().endswith("; torch BLAS mkl")


def test_the_machine_line_says_when_the_environment_chose_the_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import machine

    monkeypatch.setattr(machine, "_openblas_core", lambda: "Haswell")
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    assert machine.numpy_blas().endswith("(Haswell kernels)")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    assert machine.numpy_blas().endswith(
        "(Haswell kernels: OPENBLAS_CORETYPE=Haswell in the environment)"
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_the_openblas_kernels_are_named_where_numpy_uses_openblas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import machine
    import numpy as np

    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)  # read once loaded, not here

    blas = np.__config__.CONFIG["Build Dependencies"]["blas"]["name"]
    if "openblas" not in blas.lower():
        pytest.skip(f"numpy's BLAS here is {blas}")
    assert machine.numpy_blas().endswith(" kernels)"), machine.numpy_blas()


def test_without_proc_the_machine_line_says_what_it_can(monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS and Windows have no /proc: the CPU comes from `platform`, the BLAS from numpy's
    build, and the kernels are left out rather than guessed."""
    import machine

    import framework.blas

    monkeypatch.setattr(machine, "_cpuinfo", lambda: {})
    monkeypatch.setattr(framework.blas, "openblas_paths", lambda: [])
    monkeypatch.setattr(machine.platform, "processor", lambda: "Apple M9")
    line = machine.machine()
    assert line.startswith("cpu Apple M9, ") and "; numpy BLAS " in line, line
    assert "kernels" not in line, line
