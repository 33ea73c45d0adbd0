"""Every command the grader tells a student to type runs where the student is.

`make hint T=n L=level` in every lab's folder (and the command its output names next),
`make hint LAB=…` at the root, `status`'s next step and its capstone line, the minillm form
away from the course; and the sandbox's Windows route (spawn, a TCP socket, no memory
limit) on a real verify, as far as Linux can take it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.labs import all_labs
from grader.student.commands import hint_command, verify_command

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "NO_COLOR": "1", "MAKEFLAGS": "", "MINILLM_LANG": "en"}
ENV.pop("MINILLM_ROOT", None)
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def _run(
    command: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, shell=True, cwd=cwd, env=env or ENV, capture_output=True, text=True, timeout=300
    )


def _not_runnable(proc: subprocess.CompletedProcess[str]) -> list[str]:
    text = proc.stdout + proc.stderr
    bad = ("No such file", "command not found", "No rule to make target", "No such option")
    return [b for b in bad if b in text]


@pytest.mark.skipif(os.name == "nt", reason="make forms are for POSIX shells")
def test_each_place_gets_its_own_spelling(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MINILLM_ROOT", raising=False)
    monkeypatch.chdir(ROOT / "labs" / "lab04")
    assert hint_command("lab04", 7, 3) == "make hint T=7 L=3"
    assert verify_command("lab04") == "make test"
    assert verify_command("lab05") == "cd ../lab05 && make test"
    monkeypatch.chdir(ROOT)
    assert hint_command("lab04", 7, 3) == "make hint LAB=lab04 T=7 L=3"
    assert verify_command("lab05") == "make test LAB=lab05"
    monkeypatch.chdir(tmp_path)
    command = hint_command("lab01", 1, 1)
    assert command.endswith(" hint lab01 1 --level 1") and "make" not in command
    proc = _run(command, tmp_path)  # the minillm form runs from anywhere
    assert proc.returncode == 0 and "[TEST 1]" in proc.stdout, proc.stderr


@needs_make
@pytest.mark.parametrize("lab", [info.id for info in all_labs(ROOT)])
def test_make_hint_with_a_level_runs_in_every_lab_folder(lab: str) -> None:
    here = ROOT / "labs" / lab
    proc = _run("make -s hint T=1 L=1", here)
    assert proc.returncode == 0 and not _not_runnable(proc), proc.stdout + proc.stderr
    assert "[TEST 1]" in proc.stdout and "hint 1/" in proc.stdout
    assert "hint 2/" not in proc.stdout  # L=1: one level
    nxt = re.search(r"next hint: (.+)", proc.stdout)
    if nxt:  # the next level, spelled for this folder, runs here too
        assert nxt.group(1) == "make hint T=1 L=2"
        again = _run(nxt.group(1), here)
        assert again.returncode == 0 and "hint 2/" in again.stdout, again.stderr


@needs_make
def test_make_hint_at_the_root_names_the_lab_or_says_how() -> None:
    proc = _run("make -s hint T=1", ROOT)
    assert proc.returncode == 2
    assert "make hint LAB=lab04 T=3" in proc.stderr and "No rule" not in proc.stderr
    ok = _run("make -s hint LAB=lab01 T=1 L=1", ROOT)
    assert ok.returncode == 0 and "[TEST 1]" in ok.stdout, ok.stderr


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of the labs and solutions, every lab that `chat --mine` runs solved."""
    from grader.commands.status import chat_labs

    root = tmp_path / "course"
    shutil.copytree(ROOT / "labs", root / "labs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "solutions", root / "solutions")
    for lab in chat_labs():
        shutil.copy(root / "solutions" / lab / "student.py", root / "labs" / lab / "student.py")
    return root


def _status(root: Path, cwd: Path, lang: str) -> str:
    env = {**ENV, "MINILLM_ROOT": str(root)}
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "status", "--lang", lang],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_status_counts_no_checks_for_a_lab_not_started_and_says_try_chat_mine(
    course: Path,
) -> None:
    from grader.commands.status import chat_labs

    out = _status(course, course / "labs" / "lab01", "en")
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.strip()[:3] == "lab"}
    assert "not started" in rows["lab01"]
    cells = re.split(r"\s{2,}", rows["lab01"].strip())
    assert cells[3] == "-", rows["lab01"]  # no "0/2": a TODO run counts no real checks
    for lab in chat_labs():
        assert "done" in rows[lab], rows[lab]
    assert "Next: lab01 -> make test" in out or "Next: lab01 → make test" in out
    assert "chat --mine`: the course's model answers with your own code" in out
    zh = _status(course, course, "zh")
    assert "试试 `" in zh and "chat --mine`" in zh
    assert "make test LAB=lab01" in zh


def test_status_says_nothing_of_chat_mine_before_its_labs_pass(course: Path) -> None:
    shutil.copy(course / "labs" / "lab04" / ".stub.py", course / "labs" / "lab04" / "student.py")
    assert "chat --mine" not in _status(course, course, "en")


# -- the sandbox's Windows route, as far as Linux allows ----------------------------------
DRIVER = """
import json, os, sys, types

from grader.sandbox import launch, limits


class Like(types.ModuleType):
    '''`real`, with some attributes told otherwise.'''

    def __init__(self, real, **told):
        super().__init__(real.__name__)
        self.__dict__.update(told)
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)


launch.sys = Like(sys, platform="win32")  # fork_usable() -> False: the spawn backend
launch.os = Like(os, name="nt")  # start_fresh: a TCP socket and a process-group flag
limits.sys = Like(sys, platform="win32")  # no RLIMIT_AS, as on Windows
started = []
real_start = launch.start_fresh


def recorded(transport=None):
    fresh = real_start(transport)
    started.append(fresh.transport)
    return fresh


launch.start_fresh = recorded
sys.argv = ["minillm", *sys.argv[1:]]
import grader.__main__ as entry

real_exit = os._exit


def report_and_exit(code):
    sys.stderr.write("TRANSPORTS " + json.dumps(started) + "\\n")
    sys.stderr.flush()
    real_exit(code)


os._exit = report_and_exit
entry.main()
"""


@pytest.mark.skipif(os.name != "posix", reason="forces the Windows branches from POSIX")
def test_a_real_verify_runs_through_the_windows_route(tmp_path: Path) -> None:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    env = {k: v for k, v in ENV.items() if k != "MINILLM_SANDBOX"}
    proc = subprocess.run(
        [sys.executable, str(driver), "verify", "lab01", "--solution", "--json", "-"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["sandbox"] == "spawn"
    assert doc["summary"]["passed"] == doc["summary"]["total"] > 0
    transports = json.loads(proc.stderr.rsplit("TRANSPORTS ", 1)[1].splitlines()[0])
    assert transports and set(transports) == {"tcp"}  # every child over TCP, as on Windows


@pytest.mark.skipif(os.name != "posix", reason="forces the Windows branches from POSIX")
def test_the_windows_route_still_stops_a_student_that_hangs(tmp_path: Path) -> None:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    student = tmp_path / "student.py"
    source = (ROOT / "solutions" / "lab01" / "student.py").read_text(encoding="utf-8")
    student.write_text(source + "\n\ndef softmax_stable(x):\n    while True:\n        pass\n")
    proc = subprocess.run(
        [sys.executable, str(driver), "verify", "lab01", "--impl", str(student), "--json", "-"],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]
    statuses = {t["status"] for t in json.loads(proc.stdout)["tests"]}
    assert "TIMEOUT" in statuses and "PASS" in statuses
