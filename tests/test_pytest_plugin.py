"""`pytest labs/labNN` runs a lab's verify tests as pytest items."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from grader.labs import load_lab, resolve_lab

ROOT = Path(__file__).resolve().parent.parent


def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_solution_items_pass() -> None:
    n = len(load_lab(resolve_lab("lab04")).tests)
    proc = pytest_run("labs/lab04", "--minillm-impl", "solution")
    assert proc.returncode == 0, proc.stdout
    assert f"{n} passed" in proc.stdout


def test_stub_items_fail_with_the_report_lines() -> None:
    proc = pytest_run("labs/lab04", "--minillm-lang", "en", "-k", "scores_identity")
    assert proc.returncode == 1
    assert "[TODO] attention_scores is not implemented yet" in proc.stdout
    assert "1 failed" in proc.stdout
