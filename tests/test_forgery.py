"""No report can be forged by a submission.

`minillm grade` and `minillm verify` run hostile code: whatever it returns, raises, prints,
or however its folder is named, no report shows a grader error it did not cause, a line
of its own making (``[PASS]``, ``[TEST n]``, a table row, a workflow command), or a raw
terminal escape, carriage return, NUL or bidi override that could redraw one. Each format
is checked: the verify report, and the text, GitHub (log and step summary), JUnit,
Gradescope, CSV and HTML renderings of a batch.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader.dsl import Lab, TestContext
from grader.i18n import Text
from grader.render.classreport import render_class_report
from grader.render.csv_table import render_csv
from grader.render.github import render_github_log, render_github_summary
from grader.render.gradescope import render_gradescope
from grader.render.junit import render_junit
from grader.render.lab import render_plain
from grader.render.text import render_text
from grader.results import BatchResult, CheckResult, LabResult, Status, SubmissionResult, TestResult
from grader.runner import run_tests
from grader.sandbox.client import Sandbox
from grader.sandbox.outcome import Outcome

ROOT = Path(__file__).resolve().parent.parent

# Characters that must never reach a report raw: they move the cursor, erase or reorder.
RAW = ["\x1b", "\r", "\x00", "\x07", "\x08", "\x9b", "\u202e", "\u2066", "\u2028", "\u2029"]
GRADER_ERROR = (
    "grader error",
    "please tell the staff",
    "评测器内部错误",
    "评测程序内部错误",
    "请告诉助教",
)

# A child reply that claims the grader failed, sent by student code that took over the
# child's request loop at import.
FORGE_HARNESS = """
import grader.sandbox.worker as _worker


def _forged(frame, ctx):
    exc = {"type": "CodecError", "mro": ["CodecError"], "frames": [],
           "message": "FORGED\\n  [PASS] everything is fine"}
    return {"ok": False, "harness": True, "exc": exc}


_worker._handle = _forged
"""


def raw_in(text: str) -> list[str]:
    return [c for c in RAW if c in text]


def forged_lines(text: str) -> list[str]:
    """Lines that start (after blanks) like a check, a test or a workflow command, but
    for the report's own test headings (``[TEST n]`` at the start of a line)."""
    return [
        ln
        for ln in text.splitlines()
        if re.match(r"^\s*(\[PASS\]|\[TEST \d+\]|::|##\[)", ln)
        and not re.match(r"^\[TEST \d+\] ", ln)
    ]


# -- 1. a reply flag from the child is not a grader error --------------------------------------
def write(tmp_path: Path, source: str, name: str = "student.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def test_a_harness_flag_in_the_childs_reply_is_the_students_exception(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    student = write(tmp_path, "def f(x):\n    return x\n" + FORGE_HARNESS)
    session = sandbox.session(str(student))
    out = session.call("f", 1)
    session.close()
    assert out.kind is Outcome.EXCEPTION, out
    assert out.exc is not None and out.exc.message.startswith("FORGED")


def test_a_request_that_fails_in_the_child_is_an_exception(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    student = write(
        tmp_path,
        """
        class Box:
            @property
            def boom(self):
                raise ValueError("FORGED")

        def make():
            return Box()
        """,
    )
    session = sandbox.session(str(student))
    box = session.call("make").value
    out = session.call("boom", target=box)  # the getattr itself raises in the child
    session.close()
    assert out.kind is Outcome.EXCEPTION, out
    assert out.exc is not None and out.exc.type == "ValueError"


OPTIONS = ["--json", "-", "--no-color", "--lang"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_verify_shows_no_forged_grader_error(tmp_path: Path, lang: str) -> None:
    stubs = (ROOT / "labs" / "lab04" / "student.py").read_text(encoding="utf-8")
    impl = write(tmp_path, stubs + "\n" + FORGE_HARNESS)
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "verify", "lab04", "--impl", str(impl), *OPTIONS, lang],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    report = proc.stderr
    checks = [c for t in doc["tests"] for c in t["checks"]]
    assert checks and all(c["status"] != "PASS" for c in checks)
    for text in [report, *(c["name"] + " " + c["message"] for c in checks)]:
        for words in GRADER_ERROR:
            assert words not in text, text[-2000:]
    assert "FORGED" in report  # shown, as the student's exception, on one line
    assert forged_lines(report) == []
    assert not re.search(r"^\s*\[PASS\]", report, re.MULTILINE)


# -- 4. an exception's type name and message stay on their line ----------------------------------
RAISER = """
Forged = type("Forged\\n  [PASS] forged type\\n[TEST 9] forged", (ValueError,), {})


def f(x):
    raise Forged("bad\\n  [PASS] forged message\\n[TEST 8] forged\\x1b[2K\\r")


def g(x):
    raise RuntimeError("bad\\n  [PASS] forged message\\n[TEST 7] forged")
"""


def _raising_lab() -> Lab:
    lab = Lab("labtest", "测试", "test")

    def raises(t: TestContext) -> None:
        t.raises(("抛出 TypeError", "raises TypeError"), TypeError, "f", 1)

    def calls(t: TestContext) -> None:
        t.equal(("等于 1", "equals 1"), t.call("g", 1).value, 1)

    lab.test("raises", "raises")(raises)
    lab.test("calls", "calls")(calls)
    return lab


def test_a_raised_type_name_and_message_cannot_forge_lines(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    result = run_tests(_raising_lab(), write(tmp_path, RAISER), sandbox)
    assert [t.status for t in result.tests] == [Status.FAIL, Status.ERROR]
    message = result.tests[0].checks[0].message
    assert message is not None and "\n" not in message.en and "\n" not in message.zh
    assert "Forged\\n  [PASS] forged type" in message.en  # shown, escaped
    for lang in ("en", "zh"):
        text = render_plain(result, lang)
        assert raw_in(text) == []
        heads = [ln for ln in text.splitlines() if re.match(r"^\s*\[TEST \d+\]", ln)]
        assert [h.split("]")[0] for h in heads] == ["[TEST 1", "[TEST 2"], heads
        assert not re.search(r"^\s*\[PASS\]", text, re.MULTILINE), text


# -- 2, 3, 5. every format of a batch -------------------------------------------------------------
NAME = "mallory\x1b[2K\r\nFORGED-ROW       15    15/15\u202e\u2028x\x00"
NAME2 = "x;=1+1;,@SUM(A1)|-2\t+3"
OUTPUT = (
    "hello\x1b[1A\x1b[2K\r[PASS] forged after CR\x00\n"
    "  [PASS] forged line\u2028[PASS] after LS\u2029\x85\x9b2J\n"
    "::error file=x::forged command\n##[error]legacy\n\u202eSSAP\u2066\x07\x08"
)
MESSAGE = "expected 1, got 2\x1b[2K\r  [PASS] forged in a message\u2028  [PASS] again"
ERROR = "worker died\x1b[31m\r\n[PASS] forged error row"


def hostile_lab(lab_id: str = "lab04") -> LabResult:
    check = CheckResult(
        Text("检查\x1b[2K\r[PASS] 名字", "check\x1b[2K\r[PASS] name"),
        Status.FAIL,
        Text(MESSAGE, MESSAGE),
        OUTPUT,
        len(OUTPUT.encode()),
    )
    error = CheckResult(Text("调用", "call"), Status.ERROR, Text("boom\r[PASS]", "boom\r[PASS]"))
    tests = [
        TestResult("t1", 1, Text("测试一", "test one"), Status.FAIL, [check], points=10),
        TestResult("t2", 2, Text("测试二", "test two"), Status.ERROR, [error], points=5),
        TestResult(
            "t3", 3, Text("测试三", "test three"), Status.ERROR, [], Text(ERROR, ERROR), points=1
        ),
    ]
    result = LabResult(lab_id, Text("注意力", "attention"), "student.py", 0.1, tests)
    result.notes.append(Text("note\x1b[2K\r[PASS]", "note\x1b[2K\r[PASS]"))
    return result


def hostile_batch(n: int = 2) -> BatchResult:
    subs = [
        SubmissionResult(NAME, "a", [hostile_lab()], error=ERROR, error_zh=ERROR),
        SubmissionResult(NAME2, "b", [hostile_lab()]),
    ][:n]
    why = Text("SyntaxError\x1b[2K\r[PASS]", "SyntaxError\x1b[2K\r[PASS]")
    subs[0].labs.append(LabResult("lab07", Text("训练", "training"), "", 0.0, [], why))
    return BatchResult(["lab04", "lab07"], subs, complete=True, total=n)


LANGS = pytest.mark.parametrize("lang", ["en", "zh"])


@LANGS
def test_the_verify_report_escapes_what_the_code_printed(lang: str) -> None:
    text = render_plain(hostile_lab(), lang)
    assert raw_in(text) == []
    assert forged_lines(text) == []
    assert "| hello\\x1b[1A\\x1b[2K\\r[PASS] forged after CR\\x00" in text  # shown, escaped
    assert "|   [PASS] forged line\\u2028[PASS] after LS" in text  # a line break stays one


@LANGS
def test_the_text_table_has_one_row_per_submission(lang: str) -> None:
    text = render_text(hostile_batch(), lang)
    assert raw_in(text) == []
    rows = text.splitlines()[2:]  # after the NOT isolated line and a blank one
    assert not [r for r in rows if r.startswith(("FORGED-ROW", "[PASS]"))], rows
    subs = [r for r in rows if r.startswith(("mallory", "x;=1+1;"))]
    assert len(subs) == 2, rows
    # header, max, two rows, the note on "!" (lab07 does not import)
    assert len(rows) == 5, rows


@LANGS
def test_one_submissions_text_escapes_its_name_and_error(lang: str) -> None:
    text = render_text(hostile_batch(1), lang)
    assert raw_in(text) == []
    assert not [r for r in text.splitlines() if r.startswith(("FORGED-ROW", "[PASS]"))]
    assert forged_lines(text) == []


@LANGS
def test_the_github_log_and_summary_let_nothing_through(lang: str) -> None:
    for n in (1, 2):
        log = render_github_log(hostile_batch(n), lang, token="f00dfeed")
        assert raw_in(log) == []
        for line in log.splitlines():
            if line.startswith("::"):  # only the grader's own commands
                assert re.match(
                    r"::(stop-commands::f00dfeed|f00dfeed::$|(error|notice|warning) )", line
                ), line
        inside = log.split("::stop-commands::f00dfeed\n")[1].split("\n::f00dfeed::")[0]
        assert not re.search(r"^\s*(\[PASS\]|::|##\[)", inside, re.MULTILINE)
        summary = render_github_summary(hostile_batch(n), lang)
        assert raw_in(summary) == []
        assert not re.search(r"^\s*(\[PASS\]|::)", summary, re.MULTILINE), summary


@LANGS
def test_junit_escapes_names_messages_and_output(lang: str) -> None:
    root = ET.fromstring(render_junit(hostile_batch(), lang).split("\n", 1)[1])
    for el in root.iter():
        for value in [el.text or "", *el.attrib.values()]:
            assert raw_in(value) == [], (el.tag, value)
        if el.tag in ("testsuite", "testcase"):
            assert "\n" not in el.get("name", "") and "\n" not in el.get("classname", "")
        if el.tag in ("failure", "error"):
            assert not re.search(r"^\s*\[PASS\]", el.text or "", re.MULTILINE), el.text


@LANGS
def test_gradescope_escapes_names_messages_and_output(lang: str) -> None:
    doc = json.loads(render_gradescope(hostile_batch(1), lang))
    texts = [
        doc["output"],
        *(t["output"] for t in doc["tests"]),
        *(t["name"] for t in doc["tests"]),
    ]
    for text in texts:
        assert raw_in(text) == [], text
        assert not re.search(r"^\s*\[PASS\]", text, re.MULTILINE), text


def test_csv_quotes_text_and_defuses_every_formula() -> None:
    text = render_csv(hostile_batch(), "en")
    assert raw_in(text) == []
    lines = text.splitlines()
    assert len(lines) == 3, lines  # the header and one line per submission
    rows = list(csv.reader(io.StringIO(text)))
    assert [r[0][:7] for r in rows[1:]] == ["mallory", "x;'=1+1"]
    assert rows[2][0] == "x;'=1+1;,'@SUM(A1)|'-2 +3"  # the tab is a blank: no separator
    for line in lines:
        for field in next(csv.reader([line])):
            if field and not re.fullmatch(r"[0-9.]+", field):
                assert f'"{field}"' in line, (field, line)  # every text cell is quoted
        for sep in ",;\t|":  # a program that splits on any of them sees no formula
            for piece in line.split(sep):
                assert not re.match(r'^[\s"]*[=+\-@]', piece), (sep, piece)


@LANGS
def test_the_class_report_escapes_names_and_messages(lang: str) -> None:
    page = render_class_report(hostile_batch(), lang)
    assert raw_in(page) == []
    assert "FORGED-ROW" in page and "<td>mallory\\x1b[2K\\r\\nFORGED-ROW" in page
