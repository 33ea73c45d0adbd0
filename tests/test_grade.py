"""`minillm grade` on sample submissions: the exact score of each, in every format.

The samples (built in a temporary folder from `tests/fixtures/submissions/` and the course
itself) cover what a class hands in: a correct submission, a partly correct one (one that
only a hidden check catches), the stubs, a syntax error, an infinite loop, one that rewrote
`verify.py`, the framework and the grader and added a `conftest.py` (on stub code), one that
prints GitHub workflow commands and fake PASS lines, a zip of the correct one, and zips
that are refused. Two labs (lab04 and lab07, both with hidden checks) keep this quick.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Collection
from pathlib import Path

import pytest

from grader.course.mutants import compose, parse_mutant
from grader.grade.backends import IsolationUnavailable, choose_isolation
from grader.grade.batch import ChangePace, grade_batch
from grader.grade.checks import load_graded_lab
from grader.grade.run import GradeOptions
from grader.labs import resolve_lab
from grader.render.csv_table import render_csv
from grader.render.github import render_github_log, render_github_summary
from grader.render.gradescope import VISIBILITIES, gradescope_doc
from grader.render.json_doc import render_batch_json
from grader.render.junit import render_junit
from grader.render.text import render_text
from grader.results import BatchResult, LabResult, Status, SubmissionResult, TestResult

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "submissions"
LABS = ("lab04", "lab07")
GRADED = {lab: load_graded_lab(resolve_lab(lab)) for lab in LABS}  # public + hidden tests


def points(lab: str, ids: Collection[str] | None = None) -> int:
    """The points of `lab`'s graded tests: all of them, or those named in `ids`."""
    specs = GRADED[lab].tests
    assert ids is None or set(ids) <= {s.id for s in specs}, (lab, ids)
    total = sum(s.points for s in specs if ids is None or s.id in ids)
    assert total == int(total), "the scores below are written as whole numbers"
    return int(total)


MAX = {lab: points(lab) for lab in LABS}  # public tests + hidden tests
MAX_TOTAL = sum(MAX.values())
HIDDEN = [s.id for lab in LABS for s in GRADED[lab].tests if s.hidden]
PARTIAL = {  # a mutant per lab that only a hidden check (its `# fails:` line) catches
    "lab04": ROOT / "tests/fixtures/hidden_mutants/lab04/mask_numpy_checks_shape.py",
    "lab07": ROOT / "tests/mutants/lab07/eps_inside_sqrt.py",
}
# lab04's softmax hangs: only the tests that never call it pass.
LOOP_PASSES = (
    *("scores_identity", "scores_general", "scores_errors", "mask_causal", "mask_adds"),
    *("mask_no_broadcast", "scores_k_ndim"),
)
# lab04's attention_scores forgets the scale and apply_mask raises: each test calling them fails.
WORKFLOW_FAILS = (
    *("scores_identity", "scores_general", "scores_errors", "mask_causal", "mask_adds"),
    *("chain_causal", "worked_example", "against_framework", "accepts_arrays", "strided_views"),
    "mask_no_broadcast",
)


def solution(lab: str) -> str:
    return (ROOT / "solutions" / lab / "student.py").read_text(encoding="utf-8")


def stub(lab: str) -> str:
    return (ROOT / "labs" / lab / ".stub.py").read_text(encoding="utf-8")


def overridden(lab: str, path: Path) -> str:
    return compose(solution(lab), parse_mutant(path, require_fails=False))


def put(root: Path, files: dict[str, str]) -> Path:
    for lab, text in files.items():
        target = root / "labs" / lab / "student.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def zipped(folder: Path, target: Path, top: str = "") -> Path:
    with zipfile.ZipFile(target, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, top + path.relative_to(folder).as_posix())
    return target


def build(base: Path) -> list[Path]:
    """The sample submissions, in the order of `EXPECTED`."""
    base.mkdir(parents=True, exist_ok=True)
    correct = put(base / "correct", {lab: solution(lab) for lab in LABS})
    partial = put(base / "partial", {lab: overridden(lab, PARTIAL[lab]) for lab in LABS})
    stubs = put(base / "stub", {lab: stub(lab) for lab in LABS})
    syntax = base / "syntax_error"
    shutil.copytree(FIXTURES / "syntax_error", syntax)
    put(syntax, {"lab07": solution("lab07")})
    loop = put(
        base / "infinite_loop",
        {"lab04": overridden("lab04", FIXTURES / "infinite_loop.lab04.py"), "lab07": stub("lab07")},
    )
    tamper = base / "tamper"
    for sample in (FIXTURES / "tamper").rglob("*.sample"):  # kept inert in the repository
        target = tamper / sample.relative_to(FIXTURES / "tamper").with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, target)
    assert (tamper / "conftest.py").is_file() and (tamper / "labs/lab04/verify.py").is_file()
    put(tamper, {lab: stub(lab) for lab in LABS})
    workflow = put(
        base / "workflow",
        {"lab04": overridden("lab04", FIXTURES / "workflow.lab04.py"), "lab07": solution("lab07")},
    )
    as_zip = zipped(correct, base / "correct_zip.zip", top="minillm-main/")
    traversal = base / "traversal.zip"
    with zipfile.ZipFile(traversal, "w") as zf:
        zf.writestr("labs/lab04/student.py", solution("lab04"))
        zf.writestr("../../evil.py", "print('outside')\n")
    symlink = base / "symlink.zip"
    with zipfile.ZipFile(symlink, "w") as zf:
        info = zipfile.ZipInfo("labs/lab04/student.py")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    return [correct, partial, stubs, syntax, loop, tamper, workflow, as_zip, traversal, symlink]


# name: (lab04 score, lab07 score, whether the submission is an error row)
EXPECTED = {
    "correct": (MAX["lab04"], MAX["lab07"], False),
    "partial": (*(MAX[lab] - points(lab, parse_mutant(PARTIAL[lab]).fails) for lab in LABS), False),
    "stub": (0, 0, False),
    "syntax_error": (0, MAX["lab07"], False),
    "infinite_loop": (points("lab04", LOOP_PASSES), 0, False),
    "tamper": (0, 0, False),
    "workflow": (MAX["lab04"] - points("lab04", WORKFLOW_FAILS), MAX["lab07"], False),
    "correct_zip": (MAX["lab04"], MAX["lab07"], False),
    "traversal": (0, 0, True),
    "symlink": (0, 0, True),
}
NAMES = list(EXPECTED)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> BatchResult:
    paths = build(tmp_path_factory.mktemp("samples"))
    seen: list[int] = []
    # a fixed base seed: each submission's inputs are then the same on every run (with
    # seeds drawn at random, a mutant may also fail a test its declaration does not name)
    options = GradeOptions(LABS, jobs=2, seed=1)
    batch = grade_batch(paths, ROOT, options, on_change=lambda b: seen.append(len(b.submissions)))
    assert seen and seen[-1] == len(paths), "on_change reports the batch as it grows"
    return batch


def by_name(batch: BatchResult) -> dict[str, SubmissionResult]:
    return {s.name: s for s in batch.submissions}


def expected_total(name: str) -> int:
    lab04, lab07, _ = EXPECTED[name]
    return lab04 + lab07


def test_each_sample_gets_its_exact_score(graded: BatchResult) -> None:
    assert [s.name for s in graded.submissions] == NAMES
    assert graded.complete and not graded.isolated
    for sub in graded.submissions:
        lab04, lab07, is_error = EXPECTED[sub.name]
        got = {r.lab: r.score for r in sub.labs}
        assert got == {"lab04": lab04, "lab07": lab07}, sub.name
        assert {r.lab: r.max_score for r in sub.labs} == MAX, sub.name
        assert bool(sub.error) == is_error, f"{sub.name}: {sub.error}"


def test_what_each_sample_shows(graded: BatchResult) -> None:
    subs = by_name(graded)
    partial = subs["partial"].lab("lab04")
    assert partial is not None
    assert [t.id for t in partial.tests if t.status is not Status.PASS] == ["mask_no_broadcast"]
    assert all(t.hidden for t in partial.tests if t.id == "mask_no_broadcast")
    syntax = subs["syntax_error"].lab("lab04")
    assert syntax is not None and syntax.import_error is not None
    loop = subs["infinite_loop"].lab("lab04")
    assert loop is not None and Status.TIMEOUT in {t.status for t in loop.tests}
    tamper = subs["tamper"].lab("lab04")
    assert tamper is not None and {t.status for t in tamper.tests} == {Status.TODO}
    assert "symbolic link" in subs["symlink"].error
    assert "outside the zip" in subs["traversal"].error
    assert subs["correct_zip"].files["lab04"] == "labs/lab04/student.py"


def test_text_format(graded: BatchResult) -> None:
    text = render_text(graded, "en")
    assert text.splitlines()[0].startswith("NOT isolated")
    rows = {line.split()[0]: line.split() for line in text.splitlines()[3:] if line.strip()}
    assert rows["(max)"][1:4] == [str(MAX["lab04"]), str(MAX["lab07"]), str(MAX_TOTAL)]
    for name in NAMES:
        lab04, lab07, _ = EXPECTED[name]
        mark = "!" if name == "syntax_error" else ""  # its lab04 student.py does not import
        want = [f"{lab04}{mark}", str(lab07), f"{lab04 + lab07}/{MAX_TOTAL}"]
        assert rows[name][1:4] == want, name
    assert text.rstrip().endswith("(a score marked ! is of a student.py that does not import)")


def test_json_format(graded: BatchResult) -> None:
    doc = json.loads(render_batch_json(graded, "en"))
    assert doc["schema"] == 1 and doc["complete"] is True and doc["isolated"] is False
    assert doc["labs"] == list(LABS) and doc["max_score"] == MAX_TOTAL
    for sub in doc["submissions"]:
        lab04, lab07, is_error = EXPECTED[sub["name"]]
        assert (sub["score"], sub["max_score"], bool(sub["error"])) == (
            lab04 + lab07,
            MAX_TOTAL,
            is_error,
        )
        assert [(lab["lab"], lab["score"], lab["max_score"]) for lab in sub["labs"]] == [
            ("lab04", lab04, MAX["lab04"]),
            ("lab07", lab07, MAX["lab07"]),
        ]
        hidden = [t["id"] for lab in sub["labs"] for t in lab["tests"] if t["hidden"]]
        assert hidden == ["mask_no_broadcast", "scores_k_ndim", "adam_checks_first"]


# The Ant JUnit schema (as CI servers read it), plus pytest's <skipped>: required attributes.
JUNIT_SUITE = {"name", "tests", "failures", "errors", "time", "timestamp", "hostname", "id"}
JUNIT_CASE = {"name", "classname", "time"}


def validate_junit(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    for suite in root:
        assert suite.tag == "testsuite"
        assert JUNIT_SUITE | {"package", "skipped"} <= set(suite.attrib), suite.attrib
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp", ""))
        kids = [c.tag for c in suite]
        assert kids[0] == "properties" and kids[-2:] == ["system-out", "system-err"]
        assert set(kids[1:-2]) <= {"testcase"}
        cases = suite.findall("testcase")
        for case in cases:
            assert set(case.attrib) >= JUNIT_CASE
            float(case.get("time", "x"))
            outcomes = [c for c in case if c.tag in ("failure", "error", "skipped")]
            assert len(outcomes) <= 1
            for o in outcomes:
                assert "type" in o.attrib and "message" in o.attrib
        for kind, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
            assert int(suite.get(kind, "-1")) == sum(1 for c in cases if c.find(tag) is not None)
        assert int(suite.get("tests", "-1")) == len(cases)
    for key in ("tests", "failures", "errors"):
        assert int(root.get(key, "-1")) == sum(int(s.get(key, "0")) for s in root)
    return root


def test_junit_format(graded: BatchResult) -> None:
    root = validate_junit(render_junit(graded, "en"))
    suites = root.findall("testsuite")
    assert len(suites) == len(NAMES) * len(LABS)
    scores: dict[str, float] = {}
    for suite in suites:
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        name = str(suite.get("package"))
        scores[name] = scores.get(name, 0) + float(props["score"] or 0)
    assert scores == {n.replace(".", "_"): expected_total(n) for n in NAMES}
    correct = by_name(graded)["correct"]
    checks = sum(max(1, len(t.checks)) for lab in correct.labs for t in lab.tests)
    cases = [c for s in suites if s.get("package") == "correct" for c in s.iter("testcase")]
    assert len(cases) == checks, "one testcase per check"
    assert not any(c.find("failure") is not None for c in cases)


def test_junit_is_well_formed_whatever_the_student_printed(graded: BatchResult) -> None:
    sub = copy.deepcopy(by_name(graded)["workflow"])
    lab = sub.lab("lab04")
    assert lab is not None
    check = next(c for t in lab.tests for c in t.checks if c.output)
    check.output = "nul \x00 bell \x07 escape \x1b[31m surrogate \ud800 end"
    one = BatchResult(list(LABS), [sub], total=1)
    text = render_junit(one, "zh")
    validate_junit(text)
    assert "\\x00" in text and "\x00" not in text


def test_gradescope_format(graded: BatchResult) -> None:
    for sub in graded.submissions:
        doc = gradescope_doc(BatchResult(list(LABS), [sub], total=1), "en")
        json.dumps(doc)
        assert doc["score"] == expected_total(sub.name), sub.name
        assert doc["output"].splitlines()[0].startswith("NOT isolated")
        tests = doc["tests"]
        assert sum(t["score"] for t in tests) == doc["score"]
        assert sum(t["max_score"] for t in tests) == MAX_TOTAL
        for t in tests:
            assert set(t) == {
                "name",
                "number",
                "score",
                "max_score",
                "status",
                "output",
                "tags",
                "visibility",
            }
            assert t["status"] in ("passed", "failed") and t["visibility"] in VISIBILITIES
            assert isinstance(t["name"], str) and isinstance(t["output"], str)
        hidden = [t["name"] for t in tests if t["visibility"] == "after_published"]
        assert len(hidden) == len(HIDDEN) and all("(hidden)" in n for n in hidden)
        assert all(t["visibility"] == "visible" for t in tests if t["name"] not in hidden)
    with pytest.raises(ValueError, match="one submission"):
        gradescope_doc(graded, "en")


def test_github_format_annotates_and_lets_no_student_command_through(
    graded: BatchResult,
) -> None:
    for sub in graded.submissions:
        one = BatchResult(list(LABS), [sub], total=1)
        log = render_github_log(one, "en", token="f00dfeed")
        lines = log.splitlines()
        assert lines[0].startswith("::warning title=minillm grade::NOT isolated")
        start, end = lines.index("::stop-commands::f00dfeed"), lines.index("::f00dfeed::")
        inside, after = lines[start + 1 : end], lines[end + 1 :]
        assert not [ln for ln in inside if re.match(r"\s*(::|##\[)", ln)]
        for ln in after:
            assert re.match(r"::(error|notice) [a-z]", ln), ln
        notice = after[-1]
        assert notice.endswith(f"::score {expected_total(sub.name)}/{MAX_TOTAL}"), notice
        for ln in after[:-1]:
            if "file=" in ln:
                assert re.match(r"::error file=labs/lab0[47]/student\.py,line=\d+,title=", ln)
    workflow = BatchResult(list(LABS), [by_name(graded)["workflow"]], total=1)
    log = render_github_log(workflow, "en", token="f00dfeed")
    assert "forged by the student" in log and "every check passed" in log  # shown, defused
    assert re.search(r"::error file=labs/lab04/student\.py,line=\d+,.*RuntimeError", log)
    summary = render_github_summary(workflow, "en")
    assert summary.startswith("> **NOT isolated")
    assert f"## miniLLM — workflow: {expected_total('workflow')}/{MAX_TOTAL}" in summary
    score, tests = EXPECTED["workflow"][0], len(GRADED["lab04"].tests)
    passed = f"{tests - len(WORKFLOW_FAILS)}/{tests}"
    assert f"| lab04 Multi-head self-attention | {score}/{MAX['lab04']} | {passed} |" in summary
    outside = re.sub(r"(`{3,})text\n.*?\n\1", "", summary, flags=re.DOTALL)
    assert "every check passed" not in outside and "::" not in outside


def test_csv_format(graded: BatchResult) -> None:
    rows = list(csv.reader(io.StringIO(render_csv(graded, "en"))))
    assert rows[0] == [
        *("submission", "student_id", "lab04", "lab04_max", "lab07", "lab07_max"),
        *("total", "max_score", "did_not_import", "error"),
    ]
    maxes = [str(MAX["lab04"]), str(MAX["lab07"])]
    for row in rows[1:]:
        lab04, lab07, is_error = EXPECTED[row[0]]
        assert row[2:6:2] == [str(lab04), str(lab07)] and row[3:7:2] == maxes, row
        assert row[6:8] == [str(lab04 + lab07), str(MAX_TOTAL)], row
        assert bool(row[9]) == is_error
        assert row[8] == ("lab04" if row[0] == "syntax_error" else ""), row
    evil = SubmissionResult("=cmd|' /C calc'!A0", "x", error="+oops", student_id="@id")
    table = render_csv(BatchResult(list(LABS), [evil], total=1), "en")
    assert "\n\"'=cmd|" in table and ',"\'+oops"' in table and ',"\'@id",' in table
    for cut, done in ((True, True), (False, False)):  # stopped, or still running
        sub = SubmissionResult("carol", "c", graded.submissions[0].labs, done=done, cut=cut)
        row = list(csv.reader(io.StringIO(render_csv(BatchResult(list(LABS), [sub]), "en"))))[1]
        want = [str(MAX["lab04"]), str(MAX["lab07"]), "", str(MAX_TOTAL)]
        assert [*row[2:6:2], *row[6:8]] == want, row  # what finished, but no total


def sample(tmp_path: Path, name: str) -> Path:
    paths = build(tmp_path / "samples")
    return next(p for p in paths if p.name.removesuffix(".zip") == name)


def test_a_hanging_submission_is_an_error_row_and_the_batch_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the budget in wall time, as where CPU time cannot be measured: what a loaded machine
    # does to the CPU time of the loop is then beside the point (`over_budget` has its own test)
    monkeypatch.setattr("grader.grade.supervisor.tree_cpu_seconds", lambda pid: None)
    loop, correct = sample(tmp_path, "infinite_loop"), tmp_path / "samples" / "correct"
    batch = grade_batch([loop, correct], ROOT, GradeOptions(("lab04",), jobs=2, timeout=3))
    subs = by_name(batch)
    assert "took more than 3 s" in subs["infinite_loop"].error
    assert subs["infinite_loop"].max_score == MAX["lab04"]
    (lab,) = subs["infinite_loop"].labs
    cut_tests(lab, "took more than 3 s")  # the tests before the loop keep their points
    assert subs["correct"].score == MAX["lab04"] and not subs["correct"].error


def cut_tests(lab: LabResult, why: str) -> None:
    """A lab cut short by a time limit or a signal: the tests that finished first, with
    their verdicts (and points); every later one ERROR, saying why; at least one of each."""
    finished = [t for t in lab.tests if t.status is not Status.ERROR]
    assert lab.tests[: len(finished)] == finished, [t.status for t in lab.tests]
    rest = lab.tests[len(finished) :]
    assert finished and rest, [t.status for t in lab.tests]
    assert all(why in str(t.reason) for t in rest), rest[0].reason
    assert lab.score == sum(t.points for t in finished if t.status is Status.PASS) > 0


def test_a_submission_that_kills_its_worker_is_an_error_row(tmp_path: Path) -> None:
    crash = put(
        tmp_path / "crash",
        {
            "lab04": overridden("lab04", FIXTURES / "crash.lab04.py"),
            "lab07": solution("lab07"),
        },
    )
    correct = put(tmp_path / "correct", {"lab04": solution("lab04")})
    # one phase at a time: lab04 crashes the worker before lab07 runs
    batch = grade_batch([crash, correct], ROOT, GradeOptions(LABS, jobs=1, lanes=1))
    subs = by_name(batch)
    if batch.isolated:  # the worker is out of the student's reach
        assert not subs["crash"].error
    else:
        assert "ended unexpectedly" in subs["crash"].error
        assert subs["crash"].score == 0 and subs["crash"].max_score == MAX_TOTAL
    assert subs["correct"].score == MAX["lab04"] and not subs["correct"].error


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


def test_end_to_end_every_lab_through_the_command(tmp_path: Path) -> None:
    """The one test that grades every lab: the reference solutions score full marks."""
    labs = [
        p.name for p in sorted((ROOT / "labs").glob("lab[0-9][0-9]")) if (p / "verify.py").is_file()
    ]
    sub = put(tmp_path / "alice", {lab: solution(lab) for lab in labs})
    out = tmp_path / "grade.json"
    try:
        backend, _ = choose_isolation(True)
        extra: tuple[str, ...] = ()
    except IsolationUnavailable:
        backend, extra = "none", ("--no-isolation",)
    proc = minillm("grade", str(sub), "--format", "json", "--out", str(out), *extra, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    if backend == "none":  # the first line says so
        assert proc.stderr.splitlines()[0].startswith("NOT isolated")
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["complete"] and doc["labs"] == labs and doc["isolated"] == (backend != "none")
    (alice,) = doc["submissions"]
    assert alice["score"] == alice["max_score"] > 0 and not alice["error"]
    assert [lab["lab"] for lab in alice["labs"]] == labs
    assert all(lab["score"] == lab["max_score"] for lab in alice["labs"])


def test_the_command_refuses_bad_usage(tmp_path: Path) -> None:
    proc = minillm("grade", "a", "b", "--format", "gradescope", cwd=tmp_path)
    assert proc.returncode == 2 and "exactly one submission" in proc.stderr
    proc = minillm("grade", "a", "--labs", "lab99", cwd=tmp_path)
    assert proc.returncode == 2 and "unknown lab" in proc.stderr


def test_a_killed_run_leaves_what_finished(tmp_path: Path) -> None:
    paths = build(tmp_path / "samples")
    first = next(p for p in paths if p.name == "correct")
    loop = next(p for p in paths if p.name == "infinite_loop")
    out = tmp_path / "partial.json"
    (tmp_path / "tmp").mkdir()  # the killed run cannot remove its folder: it is left here
    env = {**os.environ, "MINILLM_LANG": "en", "TMPDIR": str(tmp_path / "tmp")}
    try:
        choose_isolation(True)
        extra: tuple[str, ...] = ()
    except IsolationUnavailable:  # a machine without bubblewrap grades unisolated
        extra = ("--no-isolation",)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            str(first),
            str(loop),
            "--labs",
            "lab04",
            "--jobs",
            "1",
            "--format",
            "json",
            "--out",
            str(out),
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    doc: dict[str, object] = {}
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            if out.exists():
                doc = json.loads(out.read_text(encoding="utf-8"))
                subs = doc["submissions"]
                if isinstance(subs, list) and len(subs) == 2:
                    break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        proc.wait()
    assert doc.get("complete") is False
    subs = doc["submissions"]
    assert isinstance(subs, list)
    assert subs[0]["name"] == "correct" and subs[0]["score"] == MAX["lab04"]
    assert not subs[0]["error"]
    assert subs[1]["name"] == "infinite_loop" and subs[1]["error"] == "grading not finished"


def _descendants(pid: int) -> set[int]:
    from grader.sandbox.limits import children_of

    found, frontier = set(), [pid]
    while frontier:
        for child in children_of(frontier.pop()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _loop_under_way(out: Path) -> bool:
    """The partial result shows the second submission graded, and a test of it finished
    (on a loaded machine a fixed pause after it starts can come before its first test)."""
    try:
        subs = json.loads(out.read_text(encoding="utf-8"))["submissions"]
    except (OSError, ValueError, KeyError):
        return False  # being rewritten
    if len(subs) < 2:
        return False
    labs = subs[1].get("labs") or []
    return bool(labs) and any(t.get("status") == "PASS" for t in labs[0].get("tests", []))


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux) to find children")
@pytest.mark.parametrize("isolated", [False, True], ids=["no-isolation", "isolated"])
def test_sigterm_stops_the_run_cleanly(tmp_path: Path, isolated: bool) -> None:
    """CI cancels a job with SIGTERM: the result file stays valid, no process survives."""
    paths = build(tmp_path / "samples")
    first = next(p for p in paths if p.name == "correct")
    loop = next(p for p in paths if p.name == "infinite_loop")
    later = shutil.copytree(first, tmp_path / "later")
    out = tmp_path / "stopped.json"
    extra: tuple[str, ...] = ("--no-isolation",)
    if isolated:
        try:
            choose_isolation(True)
        except IsolationUnavailable as e:
            pytest.skip(str(e))
        extra = ()
    args = [str(first), str(loop), str(later), "--labs", "lab04", "--jobs", "1", *extra]
    args += ["--format", "json", "--out", str(out)]
    scratch = tmp_path / "scratch"  # the run's temporary folder goes here
    scratch.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "grade", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MINILLM_LANG": "en", "TMPDIR": str(scratch)},
        start_new_session=True,
    )
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            seen |= _descendants(proc.pid)
            if out.exists() and _loop_under_way(out):
                break
        time.sleep(1.0)  # inside the loop's test by now
        seen |= _descendants(proc.pid)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        proc.send_signal(15)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
    assert proc.returncode == 128 + 15, err
    assert len(err.strip().splitlines()) == 1 + len(extra), err  # + NOT isolated, if so
    assert "stopped by SIGTERM: 1 of 3 submission(s) graded" in err.splitlines()[-1]
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["complete"] is False and doc["total"] == 3 and doc["stopped"] == "SIGTERM"
    subs = {s["name"]: s for s in doc["submissions"]}
    assert list(subs) == ["correct", "infinite_loop", "later"]
    assert subs["correct"]["score"] == MAX["lab04"] and not subs["correct"]["error"]
    for name in ("infinite_loop", "later"):
        assert "stopped (SIGTERM)" in subs[name]["error"], subs[name]
        assert subs[name]["max_score"] == MAX["lab04"]
    (lab,) = subs["later"]["labs"]  # never started
    assert {t["status"] for t in lab["tests"]} == {"ERROR"} and subs["later"]["score"] == 0
    (lab,) = subs["infinite_loop"]["labs"]  # stopped inside the loop: what ran before stays
    statuses = [t["status"] for t in lab["tests"]]
    cut = statuses.index("ERROR")
    assert cut > 0 and set(statuses[cut:]) == {"ERROR"} and "ERROR" not in statuses[:cut]
    passed = sum(t["points"] for t in lab["tests"][:cut] if t["status"] == "PASS")
    assert subs["infinite_loop"]["score"] == passed > 0
    assert len(seen) >= 2, "a worker and its sandbox child were running"
    deadline = time.monotonic() + 10
    while any(_running(p) for p in seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in seen if _running(p)], "a process of the run survived"
    assert not list(scratch.iterdir()), "the run's scratch folder was removed"


def test_the_table_of_a_stopped_run_counts_what_finished() -> None:
    stopped = "grading was stopped (SIGTERM) before this submission was finished"
    batch = BatchResult(["lab04"], total=3, stopped="SIGTERM", finished=2)
    batch.submissions = [
        SubmissionResult("alice", "a"),
        SubmissionResult("bob", "b", error="the zip file is damaged"),  # finished, with an error
        SubmissionResult("carol", "c", error=stopped),
    ]
    assert render_text(batch, "en").splitlines()[-1] == (
        "(grading was stopped (SIGTERM): 2 of 3 submissions finished)"
    )
    assert render_text(batch, "zh").splitlines()[-1] == "（评分被中止（SIGTERM）：2/3 份提交评完）"
    batch.stopped = ""  # a result file written while the run goes on
    assert render_text(batch, "en").splitlines()[-1] == "(partial: 3/3)"


def test_a_partial_report_must_be_the_first_tests_of_the_lab() -> None:
    from grader.grade.checks import load_graded_lab
    from grader.grade.supervisor import own_fields
    from grader.grade.wire import WireError
    from grader.labs import resolve_lab

    lab = load_graded_lab(resolve_lab("lab04"))
    ran = [TestResult(s.id, 0, s.title, Status.PASS) for s in lab.tests]

    def report(tests: list[TestResult]) -> LabResult:
        return LabResult("lab04", lab.title, "x", 0.0, list(tests))

    own_fields(report(ran[:2]), lab, partial=True)
    own_fields(report(ran), lab)
    for tests, partial in ((ran, True), (ran[:2], False), (ran[1:3], True), ([], False)):
        with pytest.raises(WireError, match="not its tests"):
            own_fields(report(tests), lab, partial)


def test_a_submission_without_any_graded_file_is_an_error_row(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "labs" / "lab04").mkdir(parents=True)
    (empty / "labs" / "lab04" / "solution.py").write_text("x = 1\n")  # not the file graded
    correct = put(tmp_path / "correct", {"lab04": solution("lab04")})
    batch = grade_batch([empty, correct], ROOT, GradeOptions(LABS, jobs=2))
    subs = by_name(batch)
    assert subs["empty"].error == (
        "the submission holds none of the files graded here: labs/lab04/student.py, "
        "labs/lab07/student.py"
    )
    assert subs["empty"].score == 0
    assert not subs["correct"].error and subs["correct"].score == MAX["lab04"]


def test_a_file_that_does_not_import_is_shown_where_it_breaks(graded: BatchResult) -> None:
    one = BatchResult(list(LABS), [by_name(graded)["syntax_error"]], total=1)
    after = render_github_log(one, "en", token="f00dfeed").split("::f00dfeed::\n")[1]
    lab04 = [ln for ln in after.splitlines() if "labs/lab04/" in ln]
    assert len(lab04) == 1, lab04  # one annotation at the broken line, not one per test
    assert lab04[0].startswith(
        "::error file=labs/lab04/student.py,line=7,title=lab04%3A student.py does not import::"
        "syntax error at "
    ), lab04[0]
    output = gradescope_doc(one, "en")["output"]
    assert "lab04" in output and "syntax error at " in output and ":7:" in output, output


def test_a_submissions_error_is_in_the_reports_language(graded: BatchResult) -> None:
    sub = by_name(graded)["traversal"]
    assert "refused" in sub.error_in("en") and "拒绝" in sub.error_in("zh")
    for lang, word in (("zh", "拒绝"), ("en", "refused")):
        doc = json.loads(render_batch_json(graded, lang))
        (row,) = [s for s in doc["submissions"] if s["name"] == "traversal"]
        assert word in row["error"], row["error"]
        table = render_text(graded, lang)
        assert any(word in line for line in table.splitlines() if line.startswith("traversal"))


def test_progress_is_shown_at_most_a_tenth_of_the_time() -> None:
    """A class's report is rewritten whole at each `on_change` (MBs of indented JSON): the
    batch's thread waits nine times what the last one took before the next, and at least
    `interval`, so that writing it cannot take a core from the workers."""
    now = [0.0]
    pace = ChangePace(0.25, clock=lambda: now[0])
    assert pace.due()

    def taking(seconds: float) -> Callable[[], None]:
        def show() -> None:
            now[0] += seconds

        return show

    pace.run(taking(0.01))  # a small report: the interval rules
    now[0] += 0.24
    assert not pace.due()
    now[0] += 0.01
    assert pace.due()
    pace.run(taking(1.5))  # a large one: 13.5 s before the next
    now[0] += 13.4
    assert not pace.due()
    now[0] += 0.1
    assert pace.due()
