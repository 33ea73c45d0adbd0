"""A batch as JUnit XML (``--format junit``), as pytest writes it and CI servers read it.

    <testsuites name="minillm grade" tests= failures= errors= time=>
      <testsuite id= package= name="alice.lab04" hostname= timestamp= tests= failures=
                 errors= skipped= time=>
        <properties> score, max_score, isolated, error </properties>
        <testcase classname="alice.lab04" name="[TEST 1] title :: check" time=>
          <failure type="FAIL" message="...">details</failure>     FAIL and TODO
          <error type="ERROR" message="...">details</error>         ERROR and TIMEOUT
          <error type="grader-error" message="...">details</error>  GRADER
          <skipped type="SKIP" message="..."/>                      SKIP
        </testcase>
        <system-out/> <system-err/>
      </testsuite>
    </testsuites>

A grader error (`Status.GRADER`: a bug in verify.py, a request the grader could not send)
is an ``<error>`` whose type is ``grader-error``, apart from the student's failures and
errors, so a CI server can tell the course staff's problem from the student's.
One testsuite per submission and lab, one testcase per check (a test that has no check
lines, because it did not run, is one testcase itself). The document is valid against
Jenkins' ``junit-10.xsd`` (the xUnit plugin's; a transcription is
``tests/fixtures/junit-10.xsd``), and every element and attribute that the Ant JUnit schema
requires is present: ``skipped`` is counted per testsuite only, since that schema has no
such attribute on ``<testsuites>``. A score has no place in JUnit, so each suite carries it
as properties. Text a submission chose is escaped first, as in every format (a
name or message to one line, details with their line breaks:
`grader.render.common.one_line`, `block`), then made XML-safe (`xml_safe`).
"""

from __future__ import annotations

import socket
import time
import xml.etree.ElementTree as ET

from grader.render.common import block, check_text, fmt_points, one_line, test_label, xml_safe
from grader.results import BatchResult, LabResult, Status, SubmissionResult

__all__ = ["render_junit"]

_TAG = {
    Status.FAIL: "failure",
    Status.TODO: "failure",
    Status.ERROR: "error",
    Status.TIMEOUT: "error",
    Status.SKIP: "skipped",
    Status.GRADER: "error",
}
_TYPE = {Status.GRADER: "grader-error"}  # the element's type; else the status's name


def _case(
    suite: ET.Element,
    classname: str,
    name: str,
    seconds: float,
    status: Status,
    message: str,
    details: str,
) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=xml_safe(one_line(classname)),
        name=xml_safe(one_line(name)),
        time=f"{seconds:.4f}",
    )
    tag = _TAG.get(status)
    if tag is None:
        return
    rows = block(message).strip().splitlines()
    first = rows[0] if rows else status.value
    element_type = _TYPE.get(status, status.value)
    outcome = ET.SubElement(case, tag, type=element_type, message=xml_safe(first[:500]))
    if tag != "skipped":
        outcome.text = xml_safe(block(details))


def _counts(suite: ET.Element) -> dict[str, int]:
    cases = suite.findall("testcase")
    return {
        "tests": len(cases),
        "failures": sum(1 for c in cases if c.find("failure") is not None),
        "errors": sum(1 for c in cases if c.find("error") is not None),
        "skipped": sum(1 for c in cases if c.find("skipped") is not None),
    }


def _suite(
    root: ET.Element, n: int, sub: SubmissionResult, lab: LabResult, lang: str, stamp: str
) -> ET.Element:
    package = one_line(sub.name).replace(".", "_")
    classname = f"{package}.{lab.lab}"
    suite = ET.SubElement(
        root,
        "testsuite",
        id=str(n),
        package=xml_safe(package),
        name=xml_safe(classname),
        hostname=xml_safe(socket.gethostname() or "localhost"),
        timestamp=stamp,
    )
    props = ET.SubElement(suite, "properties")
    values = {"score": fmt_points(lab.score), "max_score": fmt_points(lab.max_score)}
    if sub.error:
        values["error"] = sub.error_in(lang)
    for key, value in values.items():
        ET.SubElement(props, "property", name=key, value=xml_safe(one_line(value)))
    for test in lab.tests:
        label = test_label(test, lang)
        if not test.checks:
            reason = one_line(test.reason.pick(lang)) if test.reason else ""
            _case(suite, classname, label, test.seconds, test.status, reason, reason)
            continue
        share = test.seconds / len(test.checks)
        for c in test.checks:
            message = c.message.pick(lang) if c.message else ""
            details = check_text(c.name, c.status, c.message, c.output, lang)
            name = f"{label} :: {c.name.pick(lang)}"
            _case(suite, classname, name, share, c.status, message or c.name.pick(lang), details)
    for key, count in _counts(suite).items():
        suite.set(key, str(count))
    suite.set("time", f"{lab.seconds:.4f}")
    ET.SubElement(suite, "system-out")
    ET.SubElement(suite, "system-err")
    return suite


def render_junit(batch: BatchResult, lang: str) -> str:
    """The XML document as text."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(batch.started))
    root = ET.Element("testsuites", name="minillm grade")
    n = 0
    for sub in batch.submissions:
        for lab in sub.labs:
            _suite(root, n, sub, lab, lang, stamp)
            n += 1
    suites = root.findall("testsuite")
    for key in ("tests", "failures", "errors"):  # junit-10.xsd: no "skipped" on the root
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", f"{sum(s.seconds for s in batch.submissions):.4f}")
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n"
