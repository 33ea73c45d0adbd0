"""`minillm grade` as a trust boundary: what one sandbox hands to student code stays there.

Each test is a hostile submission (or a careless course layout) and what grading must do
with it, at every isolation level that runs here: ``bwrap`` where bubblewrap can make its
namespaces, ``uid`` where the grader is root (the level used where bubblewrap cannot run,
as in Docker). A level that cannot run here is skipped with its reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from grader.grade.supervisor import WALL_FACTOR, over_budget

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.slow,  # scheduled first (tests/conftest.py)
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="the isolation levels are Linux's"
    ),
]


def _level_problem(level: str) -> str | None:
    from grader.sandbox.bwrap import unavailable
    from grader.sandbox.uidlevel import uid_unavailable

    return unavailable() if level == "bwrap" else uid_unavailable()


LEVELS = [
    pytest.param(level, marks=pytest.mark.skipif(bool(_level_problem(level)), reason=str(why)))
    for level in ("bwrap", "uid")
    for why in [_level_problem(level)]
]


def copy_course(dst: Path, labs: tuple[str, ...]) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".minillm")
    for package in ("framework", "grader"):
        shutil.copytree(ROOT / package, dst / package, ignore=ignore)
    (dst / "labs").mkdir()
    shutil.copyfile(ROOT / "labs" / "lab.mk", dst / "labs" / "lab.mk")
    for lab in labs:
        shutil.copytree(ROOT / "labs" / lab, dst / "labs" / lab, ignore=ignore)
        shutil.copytree(ROOT / "solutions" / lab, dst / "solutions" / lab, ignore=ignore)
    return dst


def submission(dst: Path, files: dict[str, str]) -> Path:
    for lab, text in files.items():
        (dst / "labs" / lab).mkdir(parents=True)
        (dst / "labs" / lab / "student.py").write_text(text, encoding="utf-8")
    return dst


def solution(lab: str) -> str:
    return (ROOT / "solutions" / lab / "student.py").read_text(encoding="utf-8")


def grade(
    course: Path, sub: Path, labs: str, fmt: str, tmp: Path, *extra: str
) -> tuple[subprocess.CompletedProcess[str], Any]:
    out = tmp / f"result-{uuid.uuid4().hex[:8]}.{'json' if fmt != 'csv' else 'csv'}"
    scratch = tmp / "tmpdir"
    scratch.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "TMPDIR": str(scratch),
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    cmd = [sys.executable, "-m", "grader", "grade", str(sub), "--labs", labs]
    cmd += ["--format", fmt, "--out", str(out), "--lang", "en", *extra]
    done = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True, timeout=600)
    doc = json.loads(out.read_text(encoding="utf-8")) if out.exists() and fmt != "csv" else None
    return done, doc


# -- hidden checks stay hidden --------------------------------------------------------------
RECORDER = """

import os as _os

_apply_mask = apply_mask


def apply_mask(scores, mask):
    with open("/tmp/.rec", "a") as f:  # every call's mask shape, hidden tests' included
        f.write("REC" + repr(tuple(mask.shape)) + "\\n")
    _os.chmod("/tmp/.rec", 0o666)
    return _apply_mask(scores, mask)
"""

READER = """
try:
    _seen = open("/tmp/.rec").read()
except OSError as _e:
    _seen = "NOREC " + type(_e).__name__
raise RuntimeError("SEEN[" + _seen + "]")
"""


@pytest.mark.parametrize("level", LEVELS)
def test_what_a_hidden_test_hands_over_never_reaches_visible_output(
    level: str, tmp_path: Path
) -> None:
    course = copy_course(tmp_path / "course", ("lab04", "lab05"))
    sub = submission(tmp_path / "sub", {"lab04": solution("lab04") + RECORDER, "lab05": READER})
    done, doc = grade(course, sub, "lab04,lab05", "gradescope", tmp_path, "--isolation", level)
    assert doc is not None, done.stderr[-3000:]
    visible = [doc["output"]] + [t["output"] for t in doc["tests"] if t["visibility"] == "visible"]
    text = "\n".join(visible)
    assert "SEEN[NOREC" in text, text[:3000]  # lab05's module ran, and found nothing
    assert "REC(" not in text, text[:3000]  # not even lab04's public inputs
    hidden = [t for t in doc["tests"] if t["visibility"] != "visible"]
    assert hidden and all(t["status"] == "passed" for t in hidden if "lab04" in t["tags"])


def test_the_hidden_tests_run_after_every_public_one_each_lab_in_its_own_sandbox() -> None:
    from grader.grade.run import GradeJob, run_job

    course = ROOT
    made: list[tuple[str, bool]] = []

    class Recorded:
        def __init__(self, lab_id: str, hidden: bool) -> None:
            from grader.sandbox.client import Sandbox

            self.inner = Sandbox()
            made.append((lab_id, hidden))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    work = ROOT / "solutions" / ".."  # labs/<id>/student.py of the course itself
    job = GradeJob(course, ROOT / "solutions", work, ("lab04", "lab03", "lab07"))
    results: list[Any] = []
    run_job(job, lambda lab, hidden: Recorded(lab, hidden), results.append, None)  # type: ignore[arg-type,return-value]
    assert made == [
        ("lab04", False),
        ("lab03", False),
        ("lab07", False),
        ("lab04", True),
        ("lab07", True),
    ]
    assert [r.lab for r in results] == ["lab03", "lab04", "lab07"]
    lab04 = next(r for r in results if r.lab == "lab04")
    numbers = [t.number for t in lab04.tests]
    assert numbers == list(range(1, len(numbers) + 1))
    assert any(t.hidden for t in lab04.tests) and not lab04.tests[0].hidden


PEEK_SOLUTIONS = """
import glob as _glob

def attention_scores(q, k, scale):
    found = []
    for path in _glob.glob(COURSE + "/**", recursive=True):
        if "solutions" in path or path.endswith("hidden.py"):
            try:
                found.append(path + "=" + open(path).read()[:80])
            except OSError as e:
                found.append(path + "=" + type(e).__name__)
    raise RuntimeError("PEEK[" + "|".join(found) + "]")

def apply_mask(scores, mask):
    raise NotImplementedError

def softmax(x):
    raise NotImplementedError
"""


@pytest.mark.parametrize("level", LEVELS)
def test_a_course_under_usr_is_hidden_from_the_submission(level: str, tmp_path: Path) -> None:
    base = Path("/usr/src")
    if not os.access(base, os.W_OK):
        pytest.skip("/usr/src is not writable here")
    course = base / f"minillm-boundary-{uuid.uuid4().hex[:8]}"
    try:
        copy_course(course, ("lab04",))
        peek = PEEK_SOLUTIONS.replace("COURSE", repr(str(course)))
        sub = submission(tmp_path / "sub", {"lab04": peek})
        done, doc = grade(course, sub, "lab04", "json", tmp_path, "--isolation", level)
        assert doc is not None, done.stderr[-3000:]
        text = json.dumps(doc)
        assert "PEEK[" in text, text[:2000]  # the probe ran
        assert "BEGIN SOLUTION" not in text and "def register" not in text
        assert "Hidden checks of lab04" not in text
    finally:
        shutil.rmtree(course, ignore_errors=True)


# -- per-submission seeds --------------------------------------------------------------------
RECORD_PE = """

import json as _json

_pe = pe_sinusoidal


def pe_sinusoidal(pos, dim, hidden_dim):
    value = _pe(pos, dim, hidden_dim)
    with open(RECORD_PATH, "a") as f:
        f.write(_json.dumps([pos, dim, hidden_dim, value]) + "\\n")
    return value
"""

MEMORISED_PE = """

_TABLE = MEMORISED_VALUES


def pe_sinusoidal(pos, dim, hidden_dim):
    return _TABLE.get((pos, dim, hidden_dim), 0.25)
"""


def _memoriser(tmp_path: Path) -> str:
    """lab03's solution with pe_sinusoidal replaced by a table of the values verify asked
    for (recorded by running verify once with a recording pe_sinusoidal)."""
    record = tmp_path / "calls.jsonl"
    recorder = tmp_path / "recorder.py"
    recorder.write_text(
        solution("lab03") + RECORD_PE.replace("RECORD_PATH", repr(str(record))), encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-m", "grader", "verify", "lab03", "--impl", str(recorder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    table = {}
    for line in record.read_text().splitlines():
        pos, dim, hidden, value = json.loads(line)
        table[(pos, dim, hidden)] = value
    assert len(table) > 20
    return solution("lab03") + MEMORISED_PE.replace("MEMORISED_VALUES", repr(table))


_VERIFY_MEMO = [sys.executable, "-m", "grader", "verify", "lab03", "--impl"]


def _statuses(lab_doc: dict[str, Any]) -> dict[str, str]:
    return {t["id"]: t["status"] for t in lab_doc["tests"]}


def test_memorised_public_inputs_pass_verify_but_not_grade(tmp_path: Path) -> None:
    text = _memoriser(tmp_path)
    (tmp_path / "memo.py").write_text(text, encoding="utf-8")
    done = subprocess.run(
        [*_VERIFY_MEMO, str(tmp_path / "memo.py"), "--json", "-", "--lang", "en"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    verified = json.loads(done.stdout)
    assert set(_statuses(verified).values()) == {"PASS"}, _statuses(verified)
    assert verified["seed"] is None
    sub = submission(tmp_path / "sub", {"lab03": text})
    done, doc = grade(ROOT, sub, "lab03", "json", tmp_path, "--no-isolation", "--seed", "7")
    (result,) = doc["submissions"]
    graded = _statuses(result["labs"][0])
    failed = sorted(t for t, s in graded.items() if s == "FAIL")
    # only the test with random inputs fails (the ones after it need it: SKIP); the
    # hand-worked examples keep their numbers, so the memorised ones still pass
    assert failed == ["pe_frequencies"], graded
    assert graded["pe_position_zero"] == "PASS"
    assert {s for t, s in graded.items() if t not in failed} <= {"PASS", "SKIP"}
    message = json.dumps(result["labs"][0])
    assert f"--seed {result['seed']}" in message
    # and `verify --seed` draws exactly those inputs again
    seed = str(result["seed"])
    again = subprocess.run(
        [*_VERIFY_MEMO, str(tmp_path / "memo.py"), "--json", "-", "--lang", "en", "--seed", seed],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    replay = json.loads(again.stdout)
    assert _statuses(replay) == graded
    assert replay["seed"] == result["seed"]
    pe = next(t for t in replay["tests"] if t["id"] == "pe_frequencies")
    graded_pe = next(t for t in result["labs"][0]["tests"] if t["id"] == "pe_frequencies")
    assert [c["message"] for c in pe["checks"]] == [c["message"] for c in graded_pe["checks"]]


def test_a_run_seed_is_per_submission_and_derived_from_the_base() -> None:
    from grader.grade.run import GradeOptions

    fixed = GradeOptions(("lab03",), seed=11)
    assert fixed.seed_of("alice") == GradeOptions(("lab03",), seed=11).seed_of("alice")
    assert fixed.seed_of("alice") != fixed.seed_of("bob")
    assert fixed.seed_of("alice") != GradeOptions(("lab03",), seed=12).seed_of("alice")
    drawn = GradeOptions(("lab03",))
    assert len({drawn.seed_of("alice") for _ in range(8)}) > 1


@pytest.mark.parametrize("seed", ["1", "424242"])
def test_every_solution_passes_with_other_seeds(seed: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "grader", "verify", "--all", "--solution", "--seed", seed],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:]


# -- the time budget ------------------------------------------------------------------------
def test_the_budget_is_cpu_time_where_it_is_measured() -> None:
    budget = 30.0
    assert not over_budget(10.0, None, budget)  # within the budget, whatever the CPU
    assert over_budget(30.0, None, budget)  # unknown CPU time: wall time counts
    assert not over_budget(50.0, 12.0, budget)  # slowed by a neighbour, little CPU used
    assert over_budget(50.0, 30.5, budget)  # its own tree used its budget
    assert over_budget(budget * WALL_FACTOR, 1.0, budget)  # and never past the wall cap


HOG = """
import os as _os
import time as _time

def _spin():
    for _ in range(20):
        if _os.fork() == 0:
            _os.setsid()
            while True:
                pass

_spin()

def softmax(x):
    _time.sleep(0.2)
    raise NotImplementedError
"""


@pytest.mark.parametrize("level", LEVELS)
def test_an_honest_submission_keeps_its_marks_beside_a_cpu_hog(level: str, tmp_path: Path) -> None:
    from grader.sandbox.cgroup import RunGroup

    group, why = RunGroup.create(8, 0, cpus=1.0)
    if group is None or not group.cpu_dir:
        pytest.skip(f"no control group shares the CPU here: {why}")
    group.close()
    labs = ("lab04", "lab05")
    course = copy_course(tmp_path / "course", labs)
    honest = submission(tmp_path / "honest", {lab: solution(lab) for lab in labs})
    hog = submission(tmp_path / "hog", {"lab04": solution("lab04") + HOG, "lab05": HOG})
    done, doc = grade(
        course, honest, ",".join(labs), "json", tmp_path, str(hog), "--jobs", "2",
        "--timeout", "60", "--isolation", level,
    )  # fmt: skip
    assert doc is not None, done.stderr[-3000:]
    first = doc["submissions"][0]
    assert first["error"] == "" and first["score"] == first["max_score"], first["error"]


# -- intake: a hostile submission is an error row, never a dead batch ------------------------
def _git(repo: Path, *args: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_AUTHOR_NAME": "s",
        "GIT_AUTHOR_EMAIL": "s@example.com",
        "GIT_COMMITTER_NAME": "s",
        "GIT_COMMITTER_EMAIL": "s@example.com",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to make the checkouts")
def test_a_batch_of_hostile_submissions_ends_with_a_row_for_each(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    loop = subs / "loop"
    subs.mkdir()
    loop.symlink_to(loop)  # a symbolic link to itself
    fifo = submission(subs / "fifo", {"lab03": solution("lab03")})
    _git(fifo, "init", "-q")
    (fifo / ".git" / "HEAD").unlink()
    os.mkfifo(fifo / ".git" / "HEAD")  # reading it would wait forever
    dirty = submission(subs / "dirty", {"lab03": (ROOT / "labs/lab03/student.py").read_text()})
    _git(dirty, "init", "-q")
    _git(dirty, "add", "-A")
    _git(dirty, "commit", "-q", "-m", "stubs")
    (dirty / "labs/lab03/student.py").write_text(solution("lab03"), encoding="utf-8")
    done, doc = grade(
        ROOT, loop, "lab03", "json", tmp_path, str(fifo), str(dirty), "--no-isolation"
    )
    assert done.returncode == 3, done.stderr[-2000:]
    assert doc is not None and doc["complete"] is True
    rows = {s["name"]: s for s in doc["submissions"]}
    assert set(rows) == {"loop", "fifo", "dirty"}
    assert "loop of symbolic links" in rows["loop"]["error"], rows["loop"]["error"]
    assert rows["fifo"]["commit"] == ""  # HEAD was not read, and nothing waited on it
    # the committed stubs are graded, not the solution in the working tree, and it says so
    assert rows["dirty"]["score"] == 0 and rows["dirty"]["dirty"] == ["lab03"]
    assert "the commit was graded" in rows["dirty"]["note"]
    assert len(rows["dirty"]["commit"]) == 40


def test_gradescope_shows_no_hidden_outcome_before_grades_are_published() -> None:
    from grader.i18n import Text
    from grader.render.gradescope import gradescope_doc
    from grader.results import BatchResult, LabResult, Status, SubmissionResult, TestResult

    def test(n: int, status: Status, hidden: bool) -> TestResult:
        return TestResult(f"t{n}", n, Text("测试", "a test"), status, hidden=hidden)

    public = [test(n, Status.PASS, False) for n in range(1, 4)]
    lab = LabResult("lab04", Text("注意力", "attention"), "x", 0.1, [*public])
    lab.tests.append(test(4, Status.FAIL, True))  # a hidden test that failed
    sub = SubmissionResult("alice", "alice", [lab], seed=5)
    batch = BatchResult(["lab04"], [sub], isolated=True, isolation="bwrap", total=1)
    doc = gradescope_doc(batch, "en")
    visible = [doc["output"]] + [t["output"] for t in doc["tests"] if t["visibility"] == "visible"]
    assert "lab04 attention: 3/3" in doc["output"], doc["output"]
    assert "3/4" not in "\n".join(visible) and "visible tests: 3/3" in doc["output"]
    assert "published" in doc["output"] and "seed: 5" in doc["output"]
    (hidden,) = [t for t in doc["tests"] if t["visibility"] != "visible"]
    assert hidden["visibility"] == "after_published" and hidden["status"] == "failed"
    assert doc["score"] == 3  # the grade itself counts every test


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="claims are root's")
def test_no_two_sandboxes_hold_the_same_uid(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    import grader.sandbox.uidlevel as uidlevel

    class FewUids(random.Random):  # a tiny range, so that a collision would be likely
        def randrange(self, n: int) -> int:  # type: ignore[override]
            return super().randrange(4)

    monkeypatch.setattr(uidlevel.random, "SystemRandom", lambda: FewUids(7))
    held = [uidlevel.claim_uid() for _ in range(4)]
    try:
        assert len(set(held)) == 4  # each claimed once while the others are held
        with pytest.raises(OSError, match="no free uid"):
            uidlevel.claim_uid(tries=20)
        stale = held.pop()
        Path(f"/tmp/.minillm-uid-{stale}").write_text("999999999")  # its grader is gone
        assert uidlevel.claim_uid(tries=50) == stale
        held.append(stale)
    finally:
        for uid in held:
            uidlevel.release_uid(uid)


KEYS = """
import ctypes as _ctypes, os as _os

_libc = _ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = _ctypes.c_long
_ADD, _FIND = {"x86_64": (248, 249), "aarch64": (217, 218), "riscv64": (217, 218)}[
    _os.uname().machine
]
_found = _libc.syscall(_FIND, b"user", b"minillm-shared", None, -3) > 0
_added = _libc.syscall(_ADD, b"user", b"minillm-shared", b"answers", 7, -3) > 0
raise RuntimeError(f"KEYS[found={_found} added={_added}]")
"""


@pytest.mark.skipif(
    os.uname().machine not in ("x86_64", "aarch64", "riscv64"), reason="keyctl numbers"
)
@pytest.mark.parametrize("level", LEVELS)
def test_no_two_sandboxes_share_the_graders_session_keyring(level: str, tmp_path: Path) -> None:
    import ctypes

    # a grader started from a login has a session keyring, which its processes inherit
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    number = {"x86_64": 250, "aarch64": 219, "riscv64": 219}[os.uname().machine]
    assert libc.syscall(number, 1, f"minillm-{uuid.uuid4().hex}".encode()) > 0
    course = copy_course(tmp_path / "course", ("lab04", "lab05"))
    subs = tmp_path / "subs"
    first = submission(subs / "first", {"lab04": KEYS, "lab05": KEYS})
    second = submission(subs / "second", {"lab04": KEYS})
    done, doc = grade(
        course, first, "lab04,lab05", "json", tmp_path, str(second), "--isolation", level
    )
    assert doc is not None, done.stderr[-3000:]
    seen = re.findall(r"KEYS\[found=(\w+) added=(\w+)\]", json.dumps(doc))
    assert len(seen) >= 3, json.dumps(doc)[:3000]  # each lab of each submission imported
    assert all(found == "False" and added == "True" for found, added in seen), seen


PHASE_PROBE = """
import json as _json, os as _os

_here = _os.path.dirname(_os.path.abspath(__file__))
_other = _os.path.join(_os.path.dirname(_here), OTHER)
_ns = [l.split()[1:] for l in open("/proc/self/status") if l.startswith("NSpid:")][0]
try:
    _listed = sorted(_os.listdir(_other))
except OSError as _e:  # not mounted at all (a bubblewrap of its own)
    _listed = type(_e).__name__
_seen = {"ns": len(_ns), "other": _listed}
raise RuntimeError("PHASE" + _json.dumps(_seen) + "END")
"""


def test_every_phase_of_a_graded_submission_is_forked_by_its_template(tmp_path: Path) -> None:
    if _level_problem("bwrap"):
        pytest.skip(str(_level_problem("bwrap")))
    course = copy_course(tmp_path / "course", ("lab04", "lab05"))
    sub = submission(
        tmp_path / "sub",
        {lab: PHASE_PROBE.replace("OTHER", repr(other))
         for lab, other in (("lab04", "lab05"), ("lab05", "lab04"))},
    )  # fmt: skip
    done, doc = grade(course, sub, "lab04,lab05", "json", tmp_path, "--isolation", "bwrap")
    assert doc is not None, done.stderr[-3000:]
    text = json.dumps(doc).replace('\\\\"', '"').replace('\\"', '"')
    seen = [json.loads(m) for m in re.findall(r"PHASE(\{.*?\})END", text)]
    assert len(seen) >= 2, text[:3000]  # each lab's module was imported
    # a pid namespace of its own inside the template's (a bubblewrap of its own: one), and
    # the other lab's folder of the same submission covered, empty
    assert all(s == {"ns": 2, "other": []} for s in seen), seen
