"""A whole term with `minillm grade`: deadlines and late policies, a roster and its
gradebook, and regrades that start over only where something changed.

The class (lab04 only, which has hidden checks, keeps this quick), against the deadline
2026-12-15T23:59+08:00:

    alice  git: a good commit on time, a good commit 25 h later (2 days after a 15 min grace)
    bob    git: a broken commit 9 min before, a good one 11 min after (within the grace)
    carol  git: one good commit 5 d 12 h late (6 days: 60%, capped at 50%)
    dave   folder, roster submitted_at 10 h late (1 day)
    erin   zip, no submitted_at: lateness not judged
    frank  on the roster, no submission
    mallory  a folder not on the roster

Every expectation is written out by hand from those times; git runs for the test's own
setup only (the grader reads ``.git`` by hand).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from grader.grade.batch import grade_batch
from grader.grade.checks import load_graded_lab
from grader.grade.late import parse_policy, parse_time
from grader.grade.regrade import load_previous
from grader.grade.roster import read_roster
from grader.grade.run import GradeOptions
from grader.grade.supervisor import Supervisor
from grader.labs import resolve_lab
from grader.render.gradebook import render_gradebook
from grader.render.json_doc import render_batch_json
from grader.results import BatchResult, Status, SubmissionResult

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = "2026-12-15T23:59+08:00"
PENALTY = "penalty:per-day=10%,cap=50%,grace=15m"
MAX4 = sum(s.points for s in load_graded_lab(resolve_lab("lab04")).tests)
BROKEN = "def softmax(x:\n"  # does not import

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def solution(lab: str, comment: str = "") -> str:
    text = (ROOT / "solutions" / lab / "student.py").read_text(encoding="utf-8")
    return text + (f"# {comment}\n" if comment else "")


def git(repo: Path, *args: str, date: str = "") -> str:
    """Run git for the test's own setup, no user config, dates as given."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "s",
        "GIT_AUTHOR_EMAIL": "s@example.com",
        "GIT_COMMITTER_NAME": "s",
        "GIT_COMMITTER_EMAIL": "s@example.com",
    }
    if date:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = date
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def put(root: Path, files: dict[str, str]) -> Path:
    for lab, text in files.items():
        target = root / "labs" / lab / "student.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def repo(root: Path, commits: list[tuple[str, str]]) -> tuple[Path, list[str]]:
    """A repository with one commit per (committer date, lab04's text)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    shas = []
    for date, text in commits:
        put(root, {"lab04": text})
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", date, date=date)
        shas.append(git(root, "rev-parse", "HEAD"))
    return root, shas


def build_class(base: Path) -> dict[str, Any]:
    base.mkdir()
    alice, a = repo(
        base / "alice",
        [
            ("2026-12-14T10:00:00+08:00", solution("lab04")),
            ("2026-12-17T01:00:00+08:00", solution("lab04", "late")),
        ],
    )
    bob, b = repo(
        base / "bob",
        [("2026-12-15T23:50:00+08:00", BROKEN), ("2026-12-16T00:10:00+08:00", solution("lab04"))],
    )
    carol, c = repo(base / "carol", [("2026-12-21T12:00:00+08:00", solution("lab04"))])
    dave = put(base / "dave", {"lab04": solution("lab04")})
    erin_dir = put(base / "erin-src", {"lab04": solution("lab04")})
    erin = base / "erin.zip"
    with zipfile.ZipFile(erin, "w") as zf:
        zf.write(erin_dir / "labs/lab04/student.py", "labs/lab04/student.py")
    mallory = put(base / "mallory", {"lab04": solution("lab04")})
    roster = base / "roster.csv"
    roster.write_text(
        "Student ID,Name,Email,Submission,Section,Submitted At\n"
        "s1,Alice A,alice@uni.edu,alice,A,\n"
        "s2,Bob B,bob@uni.edu,bob,A,\n"
        "s3,Carol C,carol@uni.edu,carol,B,\n"
        "s4,Dave D,dave@uni.edu,dave,B,2026-12-16T10:00+08:00\n"
        "s5,Erin E,erin@uni.edu,erin.zip,B,\n"
        "s6,=Frank F,frank@uni.edu,,B,\n",
        encoding="utf-8",
    )
    paths = [alice, bob, carol, dave, erin, mallory]
    return {"paths": paths, "roster": roster, "commits": {"alice": a, "bob": b, "carol": c}}


@pytest.fixture(scope="module")
def term(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    return build_class(tmp_path_factory.mktemp("term") / "class")


def options(term: dict[str, Any], policy: str, **kw: Any) -> GradeOptions:
    return GradeOptions(
        ("lab04",),
        jobs=3,
        isolation="none",
        seed=7,
        due=parse_time(DEADLINE),
        late=parse_policy(policy),
        roster=read_roster(term["roster"]),
        **kw,
    )


def by_name(batch: BatchResult) -> dict[str, SubmissionResult]:
    return {s.name: s for s in batch.submissions}


@pytest.fixture(scope="module")
def penalized(term: dict[str, Any]) -> BatchResult:
    return grade_batch(term["paths"], ROOT, options(term, PENALTY))


@pytest.fixture(scope="module")
def on_time(term: dict[str, Any]) -> BatchResult:
    return grade_batch(term["paths"], ROOT, options(term, "on-time"))


# -- the policy's grammar and arithmetic ---------------------------------------------------
def test_the_late_policy_grammar() -> None:
    p = parse_policy("penalty:per-day=10%,cap=50%,grace=15m")
    assert (p.kind, p.per_day, p.cap, p.grace) == ("penalty", 0.1, 0.5, 900)
    p25 = parse_policy("per-day=0.25")
    assert (p25.kind, p25.per_day, p25.cap, p25.grace) == ("penalty", 0.25, 1.0, 0)
    assert parse_policy("on-time:grace=1h").grace == 3600
    due = parse_time(DEADLINE)
    assert [p.days_late(due + s, due) for s in (0, 900, 901, 900 + 86400, 901 + 86400)] == [
        0,
        0,
        1,
        1,
        2,
    ]
    assert [p.fraction(d) for d in (0, 1, 5, 6)] == [0.0, 0.1, 0.5, 0.5]
    for bad, says in [
        ("penalty", "needs per-day"),
        ("penalty:per-day=150%", "invalid per-day '150%'"),
        ("on-time:per-day=10%", "on-time takes grace, not per-day"),
        ("late:grace=1m", "the kind must be on-time or penalty"),
        ("penalty:per-day=10%,grace=soon", "invalid grace 'soon'"),
    ]:
        with pytest.raises(ValueError, match=says):
            parse_policy(bad)
    with pytest.raises(ValueError, match="no UTC offset"):
        parse_time("2026-12-15T23:59")


# -- deadlines ------------------------------------------------------------------------------
def test_on_time_grades_the_last_commit_before_the_deadline(
    term: dict[str, Any], on_time: BatchResult
) -> None:
    subs, commits = by_name(on_time), term["commits"]
    alice, bob, carol = subs["alice"], subs["bob"], subs["carol"]
    assert alice.commit == commits["alice"][0] and alice.score == MAX4
    assert alice.commit_date == "2026-12-14T10:00:00+08:00" and not alice.late
    assert (alice.late_commits, alice.newest_late) == (1, "2026-12-17T01:00:00+08:00")
    lab = bob.lab("lab04")
    assert bob.commit == commits["bob"][0] and lab is not None and lab.import_error is not None
    assert bob.score == 0 and bob.late_commits == 1 and not bob.late
    assert carol.missing and carol.score == 0 and "no commit at or before" in carol.error
    assert carol.commit == "" and carol.late_commits == 1
    dave = subs["dave"]
    assert dave.missing and "handed in after the deadline" in dave.error
    erin = subs["erin"]
    assert erin.score == MAX4 and not erin.late and "not judged" in erin.note


def test_a_penalty_grades_head_less_the_days_late(
    term: dict[str, Any], penalized: BatchResult
) -> None:
    subs, commits = by_name(penalized), term["commits"]
    expected = {  # name: (commit, late, days, fraction, score)
        "alice": (commits["alice"][1], True, 2, 0.2, round(MAX4 * 0.8, 2)),
        "bob": (commits["bob"][1], False, 0, 0.0, MAX4),  # 11 min late, within the grace
        "carol": (commits["carol"][0], True, 6, 0.5, round(MAX4 * 0.5, 2)),  # capped
        "dave": ("", True, 1, 0.1, round(MAX4 * 0.9, 2)),  # the roster's submitted_at
        "erin": ("", False, 0, 0.0, MAX4),  # a zip without submitted_at: not judged
        "mallory": ("", False, 0, 0.0, MAX4),
    }
    for name, (commit, late, days, fraction, score) in expected.items():
        sub = subs[name]
        got = (sub.commit, sub.late, sub.days_late, sub.penalty, sub.score)
        assert got == (commit, late, days, fraction, score), name
        assert sub.raw_score == MAX4 and not sub.error, name
        assert sub.penalty_points == round(MAX4 - score, 2), name
    assert subs["alice"].commit_date == "2026-12-17T01:00:00+08:00"
    assert subs["dave"].submitted_at == "2026-12-16T02:00:00+00:00"
    doc = json.loads(render_batch_json(penalized, "en"))
    alice = next(s for s in doc["submissions"] if s["name"] == "alice")
    assert alice["penalty"] == {"fraction": 0.2, "points": round(MAX4 * 0.2, 2)}
    assert alice["late"] is True and alice["days_late"] == 2 and alice["raw_score"] == MAX4
    assert doc["deadline"] == "2026-12-15T15:59:00+00:00" and doc["late_policy"] == PENALTY


# -- the roster and the gradebook ----------------------------------------------------------
def test_the_roster_joins_students_and_reports_the_missing_and_the_unknown(
    penalized: BatchResult,
) -> None:
    subs = by_name(penalized)
    assert [s.name for s in penalized.submissions] == [
        *("alice", "bob", "carol", "dave", "erin", "mallory", "s6"),
    ]
    assert (subs["alice"].student_id, subs["alice"].email) == ("s1", "alice@uni.edu")
    frank = subs["s6"]
    assert frank.missing and frank.on_roster and frank.error == "no submission"
    assert frank.score == 0 and frank.max_score == MAX4
    assert all(t.status is Status.ERROR for lab in frank.labs for t in lab.tests)
    mallory = subs["mallory"]
    assert mallory.on_roster is False and mallory.note.endswith("; not on the roster")
    assert mallory.score == MAX4


def test_the_canvas_gradebook(penalized: BatchResult) -> None:
    rows = list(csv.reader(io.StringIO(render_gradebook(penalized, "en"))))
    m = f"{MAX4:g}"
    assert rows[0] == [
        *("Student", "ID", "SIS User ID", "Section", "lab04"),
        *("Late Penalty", "Final Points", "Notes"),
    ]
    assert rows[1] == ["Points Possible", "", "", "", m, "0", m, ""]
    p = f"{round(MAX4 * 0.2, 2):g}"
    assert rows[2] == ["Alice A", "", "s1", "A", m, f"-{p}", f"{round(MAX4 * 0.8, 2):g}",
                       f"late 2 days: -20% (-{p} points)"]  # fmt: skip
    assert rows[3] == ["Bob B", "", "s2", "A", m, "0", m, ""]
    assert rows[5][2] == "s4" and rows[5][-1].startswith("late 1 day: -10%")
    assert rows[7] == ["'=Frank F", "", "s6", "B", "0", "0", "0", "no submission"]
    assert len(rows) == 8  # mallory, not on the roster, is not imported


def test_the_moodle_gradebook_marks_a_file_that_does_not_import(on_time: BatchResult) -> None:
    rows = list(csv.reader(io.StringIO(render_gradebook(on_time, "en", style="moodle"))))
    m = f"{MAX4:g}"
    assert rows[0] == [
        *("ID number", "Email address", "Full name", "lab04", "lab04 (max)"),
        *("Late penalty", "Total", "Total (max)", "Notes"),
    ]
    assert rows[1] == ["s1", "alice@uni.edu", "Alice A", m, m, "0", m, m,
                       "1 commit(s) after the deadline not graded, the newest "
                       "2026-12-17T01:00:00+08:00"]  # fmt: skip
    assert rows[2][:8] == ["s2", "bob@uni.edu", "Bob B", "0", m, "0", "0", m]
    assert rows[2][8].startswith("lab04 did not import")
    assert rows[3][3] == "0" and rows[3][8].startswith("no commit at or before the deadline")


def test_the_command_warns_about_unknown_submissions_and_writes_the_gradebook(
    term: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "book.csv"
    args = ["grade", *map(str, term["paths"][3:]), "--roster", str(term["roster"])]
    args += ["--deadline", DEADLINE, "--late-policy", PENALTY, "--labs", "lab04"]
    args += ["--format", "gradebook", "--out", str(out), "--no-isolation", "--seed", "1"]
    proc = minillm(*args, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # graded, some short of full marks
    assert "mallory is not on the roster" in proc.stderr
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    names = [r[0] for r in rows[2:]]
    assert names == ["Dave D", "Erin E", "Alice A", "Bob B", "Carol C", "'=Frank F"]
    assert [r[4] for r in rows[4:]] == ["0", "0", "0", "0"]  # not handed in here
    for bad, says in [
        (["--late-policy", "penalty:per-day=x"], "invalid per-day 'x'"),
        (["--deadline", "tomorrow"], "invalid time 'tomorrow'"),
        (["--only-lab", "lab04"], "need --previous"),
        (["--format", "gradebook", "--roster", str(tmp_path / "none.csv")], "cannot be read"),
    ]:
        proc = minillm("grade", "x", *bad, cwd=tmp_path)
        assert proc.returncode == 2 and says in proc.stderr, (bad, proc.stderr)


def minillm(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MINILLM_LANG": "en"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


# -- regrades -------------------------------------------------------------------------------
@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the submissions whose worker the Supervisor starts."""
    started: list[str] = []
    real = Supervisor._work

    def counted(self: Supervisor, index: int, job: Any, state: Any) -> None:
        started.append(state.name)
        real(self, index, job, state)

    monkeypatch.setattr(Supervisor, "_work", counted)
    return started


def previous_file(batch: BatchResult, path: Path, edit: Any = None) -> Path:
    doc = json.loads(render_batch_json(batch, "en"))
    if edit is not None:
        edit(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_regrade_with_nothing_changed_starts_no_worker(
    term: dict[str, Any], penalized: BatchResult, tmp_path: Path, workers: list[str]
) -> None:
    prev = load_previous(previous_file(penalized, tmp_path / "prev.json"))
    again = grade_batch(term["paths"], ROOT, options(term, PENALTY, previous=prev))
    assert workers == []
    before, after = by_name(penalized), by_name(again)
    for name, sub in after.items():
        assert (sub.score, sub.late, sub.penalty) == (
            before[name].score,
            before[name].late,
            before[name].penalty,
        )
        assert sub.reused == ([] if sub.missing else ["lab04"]), name
        assert sub.hashes == before[name].hashes
    assert len(after["alice"].hashes["files"]["lab04"]) == 64


def test_a_regrade_reruns_only_a_changed_file_or_changed_checks(
    term: dict[str, Any], penalized: BatchResult, tmp_path: Path, workers: list[str]
) -> None:
    changed = put(tmp_path / "mallory", {"lab04": BROKEN})
    paths = [*term["paths"][:5], changed]
    prev = load_previous(previous_file(penalized, tmp_path / "prev.json"))
    again = grade_batch(paths, ROOT, options(term, PENALTY, previous=prev))
    assert workers == ["mallory"]
    mallory = by_name(again)["mallory"]
    assert mallory.score == 0 and mallory.reused == []

    def new_checks(doc: dict[str, Any]) -> None:
        doc["submissions"][0]["hashes"]["checks"]["lab04"] = "0" * 64

    workers.clear()
    prev = load_previous(previous_file(penalized, tmp_path / "prev2.json", new_checks))
    grade_batch(term["paths"], ROOT, options(term, PENALTY, previous=prev))
    assert workers == ["alice"]


@needs_git
def test_only_lab_and_only_test_merge_with_the_previous_result(
    tmp_path: Path, workers: list[str]
) -> None:
    sub = put(tmp_path / "zoe", {"lab04": solution("lab04"), "lab07": solution("lab07")})
    labs = ("lab04", "lab07")
    first = grade_batch([sub], ROOT, GradeOptions(labs, isolation="none", seed=3))
    (zoe,) = first.submissions
    assert zoe.score == zoe.max_score
    lab04 = zoe.lab("lab04")
    assert lab04 is not None
    one, other = lab04.tests[0].id, lab04.tests[1].id

    def tamper(doc: dict[str, Any]) -> None:  # a previous verdict to tell merged from rerun
        for lab in doc["submissions"][0]["labs"]:
            for t in lab["tests"][:2]:
                t["status"] = "FAIL"

    prev = load_previous(previous_file(first, tmp_path / "prev.json", tamper))
    workers.clear()
    opts = GradeOptions(labs, isolation="none", seed=3, previous=prev, only=("lab07", ""))
    (got,) = grade_batch([sub], ROOT, opts).submissions
    statuses = {lab.lab: [t.status for t in lab.tests[:2]] for lab in got.labs}
    assert statuses == {"lab04": [Status.FAIL] * 2, "lab07": [Status.PASS] * 2}
    assert got.reused == ["lab04"] and workers == ["zoe"]

    opts = GradeOptions(labs, isolation="none", seed=3, previous=prev, only=("lab04", one))
    (got,) = grade_batch([sub], ROOT, opts).submissions
    lab = got.lab("lab04")
    assert lab is not None
    by_id = {t.id: t.status for t in lab.tests}
    assert (by_id[one], by_id[other]) == (Status.PASS, Status.FAIL)  # only `one` was taken
    lab07 = got.lab("lab07")
    assert lab07 is not None and lab07.tests[0].status is Status.FAIL  # merged as it was
    assert got.reused == ["lab07"]


def test_every_format_renders_a_term(penalized: BatchResult) -> None:
    from grader.render import formats

    for name, render in formats().items():
        if name != "gradescope":  # one submission only
            assert render(penalized, "en"), name
    table = list(csv.reader(io.StringIO(formats()["csv"](penalized, "en"))))
    alice = dict(zip(table[0], next(r for r in table if r[0] == "alice"), strict=True))
    assert alice["total"] == f"{round(MAX4 * 0.8, 2):g}"  # the total is net of the penalty
    assert alice["lab04"] == f"{MAX4:g}"  # the lab's own points are before it
