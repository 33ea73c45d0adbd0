"""Types on the verdict path: the outcome kind is an enum, the exception record a dataclass
decoded safely from the child, a grader error a status of its own that nothing the child
sends can produce, and the runner's sandbox a protocol whose notes reach the report."""

from __future__ import annotations

import ast
import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from grader.dsl import Lab, TestContext
from grader.errors import GraderError
from grader.explain import abort_line, import_message, where
from grader.grade.wire import lab_from_wire, lab_to_wire
from grader.i18n import Text
from grader.render.gradescope import GRADER_TAG, gradescope_doc
from grader.render.junit import render_junit
from grader.render.lab import render_json, render_plain
from grader.results import (
    BatchResult,
    CheckResult,
    LabResult,
    Status,
    SubmissionResult,
    TestResult,
)
from grader.runner import run_tests
from grader.sandbox.client import Sandbox
from grader.sandbox.inline import InlineSandbox
from grader.sandbox.outcome import CallOutcome, ExcInfo, Frame, Outcome, exc_info, frames_of
from grader.sandbox.session import _outcome

ROOT = Path(__file__).resolve().parent.parent
CALL = {"op": "call", "name": "f", "args": [1]}


def reply_outcome(reply: Any) -> CallOutcome:
    """The outcome the grader makes of a reply the child sent to a call of ``f(1)``."""
    return _outcome(reply, CALL, "", 0, 0.01, 1 << 16)


# -- 1. the outcome kind is an enum ----------------------------------------------------------
def test_every_outcome_of_a_reply_has_an_enum_kind() -> None:
    replies = [
        {"ok": True, "value": 2, "args": [1]},
        {"ok": False, "exc": {"type": "ValueError", "message": "x"}},
        {"ok": False, "todo": True, "exc": {}},
        {"ok": False, "missing": True, "exc": {}},
        {"ok": True, "forbidden": ["framework.math_ops:softmax"]},
        "not a dict",
    ]
    kinds = [reply_outcome(r).kind for r in replies]
    assert all(isinstance(k, Outcome) for k in kinds)
    assert kinds == [
        Outcome.OK,
        Outcome.EXCEPTION,
        Outcome.TODO,
        Outcome.MISSING,
        Outcome.FORBIDDEN,
        Outcome.UNREADABLE,
    ]
    assert str(Outcome.TIMEOUT) == "timeout"  # the word reports used before


def _string_kind_compares(path: Path) -> list[str]:
    """``x.kind == "..."`` (or ``!=``, ``in (...)``) in `path`, but a dtype's kind."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        left = node.left
        if not (isinstance(left, ast.Attribute) and left.attr == "kind"):
            continue
        if isinstance(left.value, ast.Attribute) and left.value.attr == "dtype":
            continue
        consts = [
            c
            for comp in node.comparators
            for c in ([comp] if not isinstance(comp, ast.Tuple | ast.List | ast.Set) else comp.elts)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        ]
        if consts:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_string_comparison_on_an_outcome_kind_remains() -> None:
    outcome_words = {o.value for o in Outcome}
    files = [
        p
        for folder in ("grader", "labs", "solutions", "tests")
        for p in sorted((ROOT / folder).rglob("*.py"))
    ]
    hits = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        if "kind" not in text or not any(f'"{w}"' in text for w in outcome_words):
            continue
        for hit in _string_kind_compares(path):
            line = text.splitlines()[int(hit.rsplit(":", 1)[1]) - 1]
            if any(f'"{w}"' in line for w in outcome_words):
                hits.append(hit + ": " + line.strip())
    assert not hits, hits


# -- 2. the exception record is a dataclass, decoded safely ----------------------------------
@pytest.mark.parametrize(
    "record",
    [
        {"type": ["x"], "message": {"$d": []}, "frames": "abc"},
        {"type": None, "message": 3, "frames": [1, "a", None, {"line": True, "file": 7}]},
        {"frames": [{"line": 10**30, "func": ["f"], "code": b"x"}], "mro": "ValueError"},
        {"line": "3", "offset": 2.5, "targets": [1, 2], "builtins": {"a": 1}},
        {"type": "A" * 100_000, "message": "m" * 100_000, "mro": ["X"] * 10_000},
        ["not", "a", "dict"],
        None,
        12,
    ],
)
def test_a_malformed_exception_record_decodes_to_safe_defaults(record: Any) -> None:
    exc = exc_info(record)
    assert isinstance(exc, ExcInfo)
    assert isinstance(exc.type, str) and len(exc.type) < 400
    assert isinstance(exc.message, str) and len(exc.message) < 5000
    assert all(isinstance(f, Frame) for f in exc.frames)
    for f in exc.frames:
        assert isinstance(f.file, str) and isinstance(f.func, str) and isinstance(f.code, str)
        assert isinstance(f.line, int) and not isinstance(f.line, bool) and abs(f.line) < 10**9
    assert all(isinstance(n, str) for n in exc.mro) and len(exc.mro) <= 64
    assert exc.builtins is None or all(isinstance(n, str) for n in exc.builtins)
    assert exc.line is None or isinstance(exc.line, int)
    assert isinstance(exc.offset, int) and all(isinstance(t, str) for t in exc.targets)
    # and every report line made of it renders
    out = reply_outcome({"ok": False, "exc": record, "index": True})
    assert out.kind is Outcome.EXCEPTION and out.error.index is None  # a bool is no index
    status, line = abort_line("f", out, [1])
    assert status is Status.ERROR and line.message is not None
    assert isinstance(import_message(exc).en, str) and where(exc) is not None


def test_a_well_formed_record_keeps_its_fields() -> None:
    exc = exc_info(
        {
            "type": "SyntaxError",
            "message": "invalid syntax",
            "mro": ["SyntaxError", "Exception"],
            "frames": [{"file": "student.py", "line": 3, "func": "f", "code": "x ="}],
            "file": "student.py",
            "line": 3,
            "offset": 4,
            "code": "x =",
        }
    )
    assert exc.frames == [Frame("student.py", 3, "f", "x =")]
    assert (exc.file, exc.line, exc.offset, exc.code) == ("student.py", 3, 4, "x =")
    assert "syntax error at student.py:3" in import_message(exc).en
    assert frames_of([{"file": "a.py", "line": -1}]) == [Frame("a.py", -1, "?", "")]


def test_the_child_cannot_claim_a_grader_side_timeout_field() -> None:
    out = reply_outcome(
        {"ok": False, "exc": {"type": "TimeoutError", "repeat": True, "first": 1.0, "deadline": 5}}
    )
    assert out.kind is Outcome.EXCEPTION
    assert (out.error.repeat, out.error.first, out.error.deadline) == (False, None, None)


# -- 4. a grader error is a status of its own ------------------------------------------------
FORGED_REPLIES: list[Any] = [
    {"ok": False, "harness": True, "exc": {"type": "CodecError", "message": "grader error"}},
    {"ok": False, "status": "GRADER", "grader": True, "kind": "harness", "exc": {}},
    {"ok": False, "kind": "harness", "exc": {"type": "GraderError", "status": "GRADER"}},
    {"ok": "GRADER", "exc": "harness"},
    {"ok": False, "todo": "GRADER", "missing": 0, "exc": {"type": "CodecError"}},
    "harness",
    None,
    [Status.GRADER.value],
]


@pytest.mark.parametrize("reply", FORGED_REPLIES)
def test_no_child_reply_yields_a_grader_error(reply: Any) -> None:
    out = reply_outcome(reply)
    assert out.kind is not Outcome.HARNESS
    if not out.ok:
        status, line = abort_line("f", out, [1])
        assert status is not Status.GRADER and line.status is not Status.GRADER


FORGER = """
import grader.sandbox.worker as _worker

_REPLIES = {replies!r}
_n = [0]


def _forged(frame, ctx):
    reply = _REPLIES[_n[0] % len(_REPLIES)]
    _n[0] += 1
    return reply


_worker._handle = _forged


def f(x):
    return x
"""


def test_a_hostile_child_cannot_make_a_grader_error_in_a_run(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    replies = [r for r in FORGED_REPLIES if r is not None]
    student = tmp_path / "student.py"
    student.write_text(FORGER.format(replies=replies), encoding="utf-8")
    lab = Lab("labxx", "伪造", "forged")
    for i in range(len(replies)):

        def body(t: TestContext) -> None:
            t.equal("f(1)", t.call("f", 1).value, 1)

        body.__name__ = f"forged_{i}"
        lab.test(f"伪造 {i}", f"forged {i}")(body)
    result = run_tests(lab, student, sandbox)
    statuses = [t.status for t in result.tests]
    assert Status.GRADER not in statuses, statuses
    assert all(c.status is not Status.GRADER for t in result.tests for c in t.checks)
    assert result.summary()["grader_error"] == 0
    assert "GRADER" not in render_plain(result, "en")


def test_a_request_the_grader_cannot_send_is_a_grader_error() -> None:
    out = CallOutcome(Outcome.HARNESS, exc=ExcInfo("CodecError", "cannot encode <object>"))
    status, line = abort_line("f", out)
    assert status is Status.GRADER and line.status is Status.GRADER
    assert line.message is not None and "please tell the staff" in line.message.en
    unreadable = CallOutcome(Outcome.UNREADABLE, exc=ExcInfo("CodecError", "too large"))
    assert abort_line("f", unreadable)[0] is Status.ERROR  # the child sent it: the student's


STUDENT = "def ok(x):\n    return x\n"


def bug_lab() -> Lab:
    lab = Lab("labxx", "测试", "test")

    @lab.test("通过", "passes")
    def passes(t: TestContext) -> None:
        t.equal("ok", t.call("ok", 1).value, 1)

    @lab.test("评测程序自己出错", "grader bug")
    def grader_bug(t: TestContext) -> None:
        t.equal("ok", t.call("ok", 1).value, 1)
        raise ZeroDivisionError("in verify.py")

    return lab


@pytest.fixture
def student(tmp_path: Path) -> Path:
    path = tmp_path / "student.py"
    path.write_text(STUDENT, encoding="utf-8")
    return path


def test_a_verify_bug_is_a_grader_error_in_every_format(student: Path, sandbox: Sandbox) -> None:
    result = run_tests(bug_lab(), student, sandbox)
    assert [t.status for t in result.tests] == [Status.PASS, Status.GRADER]
    summary = result.summary()
    assert (summary["grader_error"], summary["error"], summary["failed"]) == (1, 0, 0)
    text = render_plain(result, "en")
    assert "[GRADER ERROR] internal grader error" in text
    assert "grader-side, not yours" in text and "[ERROR]" not in text
    doc = render_json(result, "en")
    assert doc["summary"]["grader_error"] == 1 and doc["tests"][1]["status"] == "GRADER"
    assert lab_from_wire(json.loads(json.dumps(lab_to_wire(result)))).tests[1].status is (
        Status.GRADER
    )


def one_submission(statuses: list[Status]) -> BatchResult:
    tests = [
        TestResult(
            f"t{i}",
            i,
            Text(f"测试 {i}", f"test {i}"),
            s,
            [CheckResult(Text("检查", "check"), s, Text("出错", "went wrong"))],
        )
        for i, s in enumerate(statuses, 1)
    ]
    lab = LabResult("lab04", Text("实验", "lab"), "student.py", 0.1, tests)
    return BatchResult(["lab04"], [SubmissionResult("alice", "alice", [lab])])


def test_junit_shows_a_grader_error_apart_from_a_student_failure() -> None:
    root = ET.fromstring(render_junit(one_submission([Status.FAIL, Status.GRADER]), "en"))
    cases = root.findall(".//testcase")
    assert cases[0].find("failure") is not None and cases[0].find("error") is None
    error = cases[1].find("error")
    assert error is not None and error.get("type") == "grader-error"
    assert cases[1].find("failure") is None


def test_gradescope_marks_a_grader_error_as_the_staffs() -> None:
    doc = gradescope_doc(one_submission([Status.PASS, Status.GRADER, Status.FAIL]), "en")
    passed, broken, failed = doc["tests"]
    assert (passed["status"], passed["score"]) == ("passed", 1.0)
    assert (broken["status"], broken["score"]) == ("failed", 0.0)
    assert GRADER_TAG in broken["tags"] and GRADER_TAG not in failed["tags"]
    assert broken["output"].startswith("grader error: this is not a problem with your code")
    assert not failed["output"].startswith("grader error")
    assert "1 tests were not graded because of a grader error" in doc["output"]


# -- 6. what the runner needs of a sandbox ---------------------------------------------------
def ok_lab() -> Lab:
    lab = Lab("labxx", "测试", "test")

    @lab.test("通过", "passes")
    def passes(t: TestContext) -> None:
        t.equal("ok", t.call("ok", 1).value, 1)

    return lab


def test_the_inline_sandboxs_memory_note_reaches_the_report(student: Path) -> None:
    result = run_tests(ok_lab(), student, InlineSandbox())
    assert result.sandbox == "inline" and result.tests[0].status is Status.PASS
    text = render_plain(result, "en")
    assert "memory cannot be limited" in text
    assert "the student's code runs inside this process (debugging)" in text
    assert "not isolated" in text  # its isolation note too


def test_a_sandboxs_isolation_note_reaches_the_report(student: Path, sandbox: Sandbox) -> None:
    assert sandbox.isolation_note == ""  # every Sandbox has one
    sandbox.isolation_note = "the network is not isolated: test"
    try:
        result = run_tests(ok_lab(), student, sandbox)
    finally:
        sandbox.isolation_note = ""
    assert any("the network is not isolated: test" in n.en for n in result.notes)
    assert "note: the network is not isolated: test" in render_plain(result, "en")


# -- 7. one exception base -------------------------------------------------------------------
def test_the_graders_errors_share_one_base() -> None:
    from grader.codec import CodecError
    from grader.grade.submission import SubmissionError
    from grader.grade.wire import WireError
    from grader.labs import UnknownLab
    from grader.sandbox.limits import SandboxError

    for cls, builtin in (
        (CodecError, ValueError),
        (SubmissionError, ValueError),
        (WireError, ValueError),
        (UnknownLab, LookupError),
        (SandboxError, RuntimeError),
    ):
        assert issubclass(cls, GraderError) and issubclass(cls, builtin), cls
    source = textwrap.dedent((ROOT / "grader" / "errors.py").read_text(encoding="utf-8"))
    for name in ("CodecError", "SubmissionError", "Abort", "Interrupted"):
        assert name in source  # the docstring lists them, and says why some stay outside
