"""The student edition as a student meets it: a fresh copy written by `minillm pack`'s
`build_edition`, with the light `.venv` that `verify_edition` gives it.

Instructor commands are hidden there and refuse in one line; the handouts name no file of
`tests/`; and every shell command of every handout (the fenced sh/bash/console blocks of
TASK.md and TASK.en.md) runs: first with the stubs (a `make test` reports TODO, a snippet
that calls a stub raises NotImplementedError), then with the reference solutions (every
snippet exits 0, as its output block was made).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.cli import INSTRUCTOR_COMMANDS
from grader.course.pack import _light_venv, build_edition, edition_handout
from grader.labs import all_labs

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.slow,  # scheduled first (tests/conftest.py)
    pytest.mark.skipif(
        os.name != "posix" or shutil.which("make") is None, reason="the edition's venv and make"
    ),
]
_FENCE = re.compile(
    r"^(?P<indent>[ ]*)```(?:sh|bash|console|shell)\n(?P<body>.*?)^(?P=indent)```", re.S | re.M
)
_HEREDOC = re.compile(r"<<-?\s*'?(\w+)'?")

# Handout commands that fail because of the handout's wording, not the course's code (the
# TASK files are not edited here): each must still fail, so that a fixed one leaves the list.
KNOWN_WORDING = {
    "../../.venv/bin/minillm verify lab01 --impl other.py": "other.py is a placeholder",
}


@dataclass
class Command:
    handout: str  # labs/labNN/TASK.md
    cwd: str  # relative to the edition's root
    text: str


def handout_commands(edition: Path) -> list[Command]:
    """Every command of every fenced shell block, with the folder it runs in: a block
    that starts with `cd labs/labNN` runs from the root, any other from its lab's folder."""
    found: list[Command] = []
    for handout in sorted(edition.glob("labs/lab*/TASK*.md")):
        rel = str(handout.relative_to(edition))
        lab_dir = str(handout.parent.relative_to(edition))
        for m in _FENCE.finditer(handout.read_text(encoding="utf-8")):
            lines = textwrap.dedent(m.group("body")).splitlines()
            cwd = lab_dir
            if lines and lines[0].startswith("cd "):
                cwd = "."
            i = 0
            while i < len(lines):
                line = lines[i].split("  #")[0].rstrip() if "<<" not in lines[i] else lines[i]
                i += 1
                if not line.strip():
                    continue
                heredoc = _HEREDOC.search(line)
                if heredoc:  # the command runs to its terminator line
                    end = next(
                        j for j in range(i, len(lines)) if lines[j].strip() == heredoc.group(1)
                    )
                    line = "\n".join([line, *lines[i : end + 1]])
                    i = end + 1
                if line.startswith("cd "):
                    cwd = os.path.normpath(os.path.join(cwd, line[3:].strip()))
                    continue
                found.append(Command(rel, cwd, line))
    return found


@pytest.fixture(scope="module")
def edition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("edition") / "course"
    build_edition(ROOT, out, all_labs(ROOT))
    _light_venv(out)
    return out


def _env(edition: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MINILLM_ROOT")
    }
    return {**env, "NO_COLOR": "1", "MAKEFLAGS": "", "MINILLM_LANG": "en"}


def _minillm(edition: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(edition / ".venv" / "bin" / "minillm"), *args],
        cwd=edition, env=_env(edition), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_instructor_commands_are_hidden_and_refused_in_one_line(edition: Path) -> None:
    listing = _minillm(edition, "--help")
    assert listing.returncode == 0, listing.stderr
    shown = {
        ln.split()[0] for ln in listing.stdout.split("Commands:")[1].splitlines() if ln.strip()
    }
    assert not shown & set(INSTRUCTOR_COMMANDS), shown
    assert {"verify", "status", "hint", "watch", "reset", "grade"} <= shown
    assert "--solution" not in _minillm(edition, "verify", "--help").stdout
    for args in (
        ["verify", "lab01", "--solution"],
        ["verify", "--all", "--solution"],
        ["pack", "../again"],
        ["pack", "--help"],
        ["self-check"],
        ["stubs", "--check"],
        ["gradescope-bundle", "x.zip"],
    ):
        proc = _minillm(edition, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and ": instructors only: " in lines[0], (args, proc.stderr)
        assert "No such file" not in proc.stderr and "no such file" not in proc.stderr
    assert not (edition.parent / "again").exists() and not (edition / "x.zip").exists()


def test_the_edition_handouts_name_no_file_of_tests(edition: Path) -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in ROOT.glob("labs/*/TASK*.md"))
    assert "verify:excerpt impl=tests/" in source  # there is something to remove
    for handout in edition.glob("labs/*/TASK*.md"):
        text = handout.read_text(encoding="utf-8")
        assert "verify:excerpt" not in text and "impl=tests/" not in text, handout
    kept = "intro\n<!-- verify:excerpt impl=tests/x.py tests=1 -->\n```text\nout\n```\n"
    assert edition_handout(kept) == "intro\n```text\nout\n```\n"  # the output block stays


_NOT_RUNNABLE = (
    "No such file",
    "command not found",
    "No rule to make target",
    "No such option",
    "ModuleNotFoundError",
    "ImportError",
    "SyntaxError",
)


def _run_all(edition: Path) -> list[tuple[Command, subprocess.CompletedProcess[str]]]:
    """Every handout command with what it printed. A command that both handouts of a lab
    give (TASK.md and TASK.en.md, in the same folder) runs once: no handout command
    changes the edition, so a second run could only repeat the first."""
    ran: dict[tuple[str, str], subprocess.CompletedProcess[str]] = {}
    done = []
    for c in handout_commands(edition):
        # _env sets MINILLM_LANG=en already: with the prefix or without, one command
        key = (c.cwd, c.text.removeprefix("MINILLM_LANG=en "))
        if key not in ran:
            ran[key] = subprocess.run(
                key[1], shell=True, executable="/bin/bash", cwd=edition / c.cwd,
                env=_env(edition), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=300,
            )  # fmt: skip
        done.append((c, ran[key]))
    return done


def _verdicts(edition: Path, solved: bool) -> list[str]:
    problems, wording = [], set()
    for c, proc in _run_all(edition):
        text = proc.stdout + proc.stderr
        where = f"{c.handout} (in {c.cwd}): {c.text.splitlines()[0]}"
        if c.text in KNOWN_WORDING:
            wording.add(c.text)
            if proc.returncode == 0:
                problems.append(f"{where}: now runs; take it off KNOWN_WORDING")
            continue
        if bad := [b for b in _NOT_RUNNABLE if b in text]:
            problems.append(f"{where}: {bad} | {text.strip()[-300:]}")
        elif "make test" in c.text:  # verify ran: 0, or make's 2 for verify's 1 (TODO, FAIL)
            if proc.returncode not in (0, 2) or (proc.returncode == 2 and "Error 1" not in text):
                problems.append(f"{where}: exit {proc.returncode} | {text.strip()[-300:]}")
            elif not solved and "[TODO]" not in proc.stdout:
                problems.append(f"{where}: a stub that is not TODO")
        elif proc.returncode != 0 and (solved or "NotImplementedError" not in text):
            problems.append(f"{where}: exit {proc.returncode} | {text.strip()[-300:]}")
    assert wording == set(KNOWN_WORDING) or not KNOWN_WORDING, "a KNOWN_WORDING command is gone"
    return problems


def test_every_handout_command_runs_in_a_fresh_edition(edition: Path) -> None:
    commands = handout_commands(edition)
    assert len({c.handout for c in commands}) == 2 * len(all_labs(ROOT))  # every handout
    assert _verdicts(edition, solved=False) == []


def test_every_handout_command_runs_against_the_solutions(edition: Path, tmp_path: Path) -> None:
    solved = tmp_path / "solved"
    shutil.copytree(edition, solved, symlinks=True, ignore=shutil.ignore_patterns(".venv"))
    _light_venv(solved)
    for info in all_labs(ROOT):
        shutil.copy(info.solution, solved / "labs" / info.id / "student.py")
    assert _verdicts(solved, solved=True) == []
