"""The first `make test` says what it is doing while it builds .venv; later runs are quiet.

Runs the real Makefiles (the root one and a lab's, through labs/lab.mk) in a copy of the
tree, with a stand-in `python` whose `venv` and `pip` only print what the real ones would.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FAKE_PYTHON = f"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python"
    printf '#!/bin/sh\\necho "minillm $*"\\n' > "$3/bin/minillm" && chmod +x "$3/bin/minillm"
    exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
    echo "pip $*"
    echo "Collecting numpy"
    echo "Successfully installed numpy"
    exit 0
fi
exec {sys.executable} "$@"
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    if shutil.which("make") is None:
        pytest.skip("needs make")
    (tmp_path / "labs" / "lab04").mkdir(parents=True)
    for rel in ("Makefile", "pyproject.toml", "labs/lab.mk", "labs/lab04/Makefile"):
        shutil.copy(ROOT / rel, tmp_path / rel)
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    return tmp_path


def make(tree: Path, cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["make", "--no-print-directory", f"PYTHON={tree / 'fake-python'}", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return proc.stdout + proc.stderr


def test_the_first_setup_shows_progress_and_later_ones_are_quiet(tree: Path) -> None:
    first = make(tree, tree, "setup")
    assert "setting up .venv (first run only) ..." in first
    assert "Collecting numpy" in first  # the installer's own progress reaches the terminal
    pip = next(line for line in first.splitlines() if line.startswith("pip "))
    assert "--quiet" not in pip and " -q" not in pip
    assert make(tree, tree, "setup") == ""
    assert make(tree, tree, "test").strip() == "minillm verify lab04"


def test_a_labs_make_test_shows_the_first_setup_too(tree: Path) -> None:
    lab = tree / "labs" / "lab04"
    first = make(tree, lab, "test")
    assert "setting up .venv (first run only) ..." in first
    assert "Collecting numpy" in first
    assert first.rstrip().endswith("minillm verify lab04")
    assert make(tree, lab, "test").strip() == "minillm verify lab04"


def test_a_labs_make_hint_runs_the_hint_command_the_report_names(tree: Path) -> None:
    lab = tree / "labs" / "lab04"
    make(tree, lab, "test")  # set up first
    assert make(tree, lab, "hint", "T=7").strip() == "minillm hint lab04 7 --level 9"
    assert make(tree, lab, "hint").strip() == "minillm hint lab04 --level 9"
