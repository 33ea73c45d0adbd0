"""The student's loop, driven as a student drives it: status, hint, watch, reset.

Each test works on a copy of the course (MINILLM_ROOT), so the real stubs stay stubs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.labs import load_lab, resolve_lab
from grader.spec import hint_levels

ROOT = Path(__file__).resolve().parent.parent
MINILLM = [sys.executable, "-m", "grader"]


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of the course's labs and solutions: lab01 done, lab02 half done."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "labs", root / "labs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "solutions", root / "solutions")
    shutil.copy(root / "solutions" / "lab01" / "student.py", root / "labs" / "lab01" / "student.py")
    half = (root / "solutions" / "lab02" / "student.py").read_text(encoding="utf-8")
    stub = (root / "labs" / "lab02" / "student.py").read_text(encoding="utf-8")
    # encode_byte solved, the rest still stubs
    start = half.index("def encode_byte")
    end = half.index("\ndef ", start + 1)
    solved = half[start:end]
    s_start = stub.index("def encode_byte")
    s_end = stub.index("\ndef ", s_start + 1)
    (root / "labs" / "lab02" / "student.py").write_text(
        half[: half.index("def ")] + stub[stub.index("def ") : s_start] + solved + stub[s_end:],
        encoding="utf-8",
    )
    return root


def minillm(
    *args: str, root: Path, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, MINILLM_ROOT=str(root), NO_COLOR="1", **(env or {}))
    return subprocess.run(
        [*MINILLM, *args], capture_output=True, text=True, env=full, input=stdin, timeout=120
    )


def test_status_shows_done_started_and_next(course: Path) -> None:
    proc = minillm("status", "--lang", "en", root=course)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()[:3] == "lab"}
    lab01, lab03 = (len(load_lab(resolve_lab(lab)).tests) for lab in ("lab01", "lab03"))
    assert "done" in rows["lab01"] and f"{lab01}/{lab01}" in rows["lab01"]
    assert "in progress" in rows["lab02"]
    assert "not started" in rows["lab03"] and f"0/{lab03}" in rows["lab03"]
    assert "Next: lab02" in proc.stdout


def test_status_reuses_results_until_a_file_changes(course: Path) -> None:
    minillm("status", root=course)
    cache = course / ".minillm" / "progress.json"
    first = json.loads(cache.read_text(encoding="utf-8"))
    assert set(first) == {p.name for p in (course / "labs").glob("lab[0-9][0-9]")}
    student = course / "labs" / "lab03" / "student.py"
    shutil.copy(course / "solutions" / "lab03" / "student.py", student)
    proc = minillm("status", "--lang", "en", root=course)
    second = json.loads(cache.read_text(encoding="utf-8"))
    assert second["lab01"] == first["lab01"]  # unchanged files: the same entry
    assert second["lab03"]["key"] != first["lab03"]["key"]
    assert second["lab03"]["progress"]["done"] is True
    assert "Next: lab02" in proc.stdout


def test_hint_runs_no_test_after_the_one_it_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test's result depends only on the tests before it: `hint` stops there."""
    from click.testing import CliRunner

    import grader.runner
    from grader.cli import cli

    ran: list[str] = []
    real = grader.runner.run_one

    def counted(spec, *args, **kwargs):  # type: ignore[no-untyped-def]
        ran.append(spec.id)
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(grader.runner, "run_one", counted)
    ids = [s.id for s in load_lab(resolve_lab("lab04")).tests]
    shown = CliRunner().invoke(cli, ["hint", "lab04", ids[2], "--lang", "en"])  # the stub
    assert shown.exit_code == 0, shown.output
    assert ran == ids[:3] and shown.output.startswith("[TEST 3] ")
    ran.clear()
    first = CliRunner().invoke(cli, ["hint", "lab04", "--lang", "en"])
    assert first.exit_code == 0 and ran == ids[:1] and first.output.startswith("[TEST 1] ")
    wrong = CliRunner().invoke(cli, ["hint", "lab04", "99", "--lang", "en"])
    assert wrong.exit_code == 2 and f"1 ({ids[0]})" in wrong.output


def test_a_failing_check_shows_its_hint(course: Path) -> None:
    student = course / "labs" / "lab04" / "student.py"
    text = (course / "solutions" / "lab04" / "student.py").read_text(encoding="utf-8")
    student.write_text(text.replace("v - v.max(axis=-1, keepdims=True)", "v"), encoding="utf-8")
    proc = minillm("verify", "lab04", "--lang", "en", root=course)
    assert proc.returncode == 1
    tests = load_lab(resolve_lab("lab04")).tests
    n = next(n for n, s in enumerate(tests, 1) if s.id == "softmax_stable")
    block = proc.stdout[proc.stdout.index(f"[TEST {n}]") : proc.stdout.index(f"[TEST {n + 1}]")]
    spec = tests[n - 1]
    test_hints = hint_levels(spec.hint)
    own = block.split("hint: ", 1)[1].split("\n")[0]  # the failed check's own hint ...
    own = re.sub(r" \(\d+ more: [^)]*\)$", "", own)  # ... without its footer
    assert own and own not in [h.en for h in test_hints]
    assert "likely cause: softmax without subtracting the max" in block
    hint = minillm("hint", "lab04", "--lang", "en", "--level", "2", root=course)
    assert f"[TEST {n}]" in hint.stdout
    levels = 1 + len(test_hints)  # the check's own hint, then the test's levels
    assert f"hint 1/{levels}: {own}" in hint.stdout
    assert f"hint 2/{levels}: {test_hints[0].en}" in hint.stdout
    assert "L=3" in hint.stdout or "--level 3" in hint.stdout


def test_reset_keeps_an_identical_backup(course: Path) -> None:
    student = course / "labs" / "lab01" / "student.py"
    mine = student.read_bytes()
    refused = minillm("reset", "lab01", "--lang", "en", root=course, stdin="n\n")
    assert "Nothing changed" in refused.stdout and student.read_bytes() == mine
    proc = minillm("reset", "lab01", "--lang", "en", root=course, stdin="y\n")
    assert proc.returncode == 0, proc.stderr
    backups = list(student.parent.glob("student.py.*.bak"))
    assert len(backups) == 1 and backups[0].read_bytes() == mine
    assert str(backups[0]) in proc.stdout
    assert student.read_bytes() == (student.parent / ".stub.py").read_bytes()
    again = minillm("reset", "lab01", "--yes", "--lang", "en", root=course)
    assert "already the stub" in again.stdout
    assert len(list(student.parent.glob("student.py.*.bak"))) == 1


def _read_until(proc: subprocess.Popen[str], marker: str, seen: list[str], limit: float) -> None:
    deadline = time.monotonic() + limit
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return
    raise AssertionError(f"no {marker!r} in time; output so far:\n{''.join(seen)}")


def test_watch_reruns_after_a_save_and_quits_on_q(course: Path) -> None:
    env = dict(os.environ, MINILLM_ROOT=str(course), NO_COLOR="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [*MINILLM, "watch", "lab03", "--poll", "--interval", "0.1", "--lang", "en"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    seen: list[str] = []
    try:
        _read_until(proc, "watching", seen, 60)
        total = len(load_lab(resolve_lab("lab03")).tests)
        assert any(f"0/{total} tests passed" in line for line in seen)
        shutil.copy(
            course / "solutions" / "lab03" / "student.py", course / "labs" / "lab03" / "student.py"
        )
        seen.clear()
        _read_until(proc, "watching", seen, 60)
        assert any("all passed" in line for line in seen), "".join(seen)
        assert proc.stdin is not None
        proc.stdin.write("q\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_legacy_code_page_does_not_crash(course: Path) -> None:
    env = {"PYTHONIOENCODING": "cp1252", "LANG": "zh_CN.UTF-8", "LC_ALL": ""}
    for args in (("verify", "lab04"), ("status",), ("hint", "lab04")):
        proc = minillm(*args, root=course, env=env)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 1)
        proc.stdout.encode("cp1252")  # everything printed is representable
    verify = minillm("verify", "lab04", "--lang", "zh", root=course, env=env)
    assert "Traceback" not in verify.stderr  # Chinese on cp1252: '?' rather than a crash


def test_completion_scripts_name_the_commands() -> None:
    proc = subprocess.run([*MINILLM, "completion", "bash"], capture_output=True, text=True)
    assert proc.returncode == 0 and "_MINILLM_COMPLETE" in proc.stdout
    env = dict(
        os.environ,
        _MINILLM_COMPLETE="bash_complete",
        COMP_WORDS="minillm hint lab0",
        COMP_CWORD="2",
    )
    done = subprocess.run([*MINILLM], capture_output=True, text=True, env=env)
    assert "lab04" in done.stdout
