"""Every JUnit document the grader writes is valid against Jenkins' ``junit-10.xsd``.

The schema is the xUnit plugin's, transcribed in ``tests/fixtures/junit-10.xsd``. It needs
lxml (or, pure Python, xmlschema): without either the validation is skipped, said once.
`validate_junit_xsd` is also what other tests call on the documents they render.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from grader.i18n import Text
from grader.render.junit import render_junit
from grader.results import BatchResult, CheckResult, LabResult, Status, SubmissionResult, TestResult

XSD = Path(__file__).resolve().parent / "fixtures" / "junit-10.xsd"
HAVE_LXML = importlib.util.find_spec("lxml") is not None
HAVE_XMLSCHEMA = importlib.util.find_spec("xmlschema") is not None
needs_a_validator = pytest.mark.skipif(
    not (HAVE_LXML or HAVE_XMLSCHEMA),
    reason="validating against junit-10.xsd needs lxml or xmlschema (pip install lxml)",
)


@cache
def _schema() -> Any:
    if HAVE_LXML:
        from lxml import etree  # type: ignore[import-untyped, unused-ignore]

        return etree.XMLSchema(etree.parse(str(XSD)))
    import xmlschema  # type: ignore[import-not-found, unused-ignore]

    return xmlschema.XMLSchema(str(XSD))


def schema_errors(text: str) -> list[str]:
    """What junit-10.xsd rejects in the document (empty: valid)."""
    schema = _schema()
    if HAVE_LXML:
        from lxml import etree  # type: ignore[import-untyped, unused-ignore]

        doc = etree.fromstring(text.encode("utf-8"))
        if schema.validate(doc):
            return []
        return [f"line {e.line}: {e.message}" for e in schema.error_log]
    return [str(e) for e in schema.iter_errors(text)]


def validate_junit_xsd(text: str) -> None:
    """Assert that junit-10.xsd accepts the document (skips when no validator is installed)."""
    if not (HAVE_LXML or HAVE_XMLSCHEMA):
        pytest.skip("validating against junit-10.xsd needs lxml or xmlschema")
    assert schema_errors(text) == []


def every_status_lab(lab_id: str = "lab04") -> LabResult:
    tests = [
        TestResult(
            f"t{i}",
            i,
            Text(f"测试{i}", f"test {i}"),
            status,
            [CheckResult(Text("检查", "check"), status, Text("信息", "message <&>\"'"), "out\n")],
            seconds=0.01,
        )
        for i, status in enumerate(Status, 1)
    ]
    tests.append(  # a test that did not run: no check lines, a reason
        TestResult(
            "skipped",
            len(tests) + 1,
            Text("跳过", "skipped"),
            Status.SKIP,
            [],
            Text("前置测试失败", "a required test failed"),
        )
    )
    return LabResult(lab_id, Text("实验", "lab"), "student.py", 0.2, tests)


def batch() -> BatchResult:
    hostile = "x\x00\x1b[31m]]><!-- --> \ud800 \u2028 <testsuites skipped='1'>"
    subs = [
        SubmissionResult("alice", "alice/", [every_status_lab(), every_status_lab("lab07")]),
        SubmissionResult(hostile, "b.zip", [every_status_lab()], error=hostile, error_zh=hostile),
        SubmissionResult("empty", "empty/", [], error="no student.py", error_zh="没有 student.py"),
    ]
    broken = LabResult("lab07", Text("训练", "training"), "", 0.0, [], Text("导入", "import"))
    subs[1].labs.append(broken)
    return BatchResult(["lab04", "lab07"], subs, complete=True, total=len(subs))


def test_the_schema_is_the_transcription_of_jenkins_junit_10() -> None:
    head = XSD.read_text(encoding="utf-8")[:600]
    assert "transcription" in head and "junit-10.xsd" in head and "xunit-plugin" in head


@needs_a_validator
def test_the_schema_rejects_skipped_on_testsuites() -> None:
    """The reason for this file: Jenkins refused a report with skipped= on the root."""
    bad = '<testsuites skipped="1"><testsuite name="a" tests="0"/></testsuites>'
    assert schema_errors(bad) != []
    assert schema_errors('<testsuites tests="0"><testsuite name="a" tests="0"/></testsuites>') == []
    assert schema_errors('<testsuites><testsuite tests="0"/></testsuites>') != []  # no name


@needs_a_validator
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_junit_document_is_valid(lang: str) -> None:
    text = render_junit(batch(), lang)
    validate_junit_xsd(text)
    assert "grader-error" in text  # the grader's own error stays, as an <error> element


@needs_a_validator
def test_an_empty_batch_is_valid() -> None:
    validate_junit_xsd(render_junit(BatchResult(["lab04"], []), "en"))
