"""Run one lab's tests against one implementation and collect a `LabResult`.

One sandbox session (a forked child with the student module imported) serves the tests in
order, like one Python process serves a pytest run; a child that timed out, crashed,
flooded its output or ran out of memory is replaced before the next call (see
`Session`). A test whose prerequisite did not pass is SKIP. An exception in verify.py itself
is reported as a grader error, apart from anything the student did.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import Any

from grader.dsl import Abort, Lab, TestContext, TestSpec, hint_levels
from grader.explain import import_message
from grader.i18n import tr
from grader.labs import LabInfo, load_lab
from grader.results import CheckResult, LabResult, Status, TestResult
from grader.sandbox.client import Sandbox
from grader.sandbox.session import Session

__all__ = ["run_lab", "run_one", "run_tests"]


def run_lab(info: LabInfo, impl: Path, sandbox: Sandbox, lab: Lab | None = None) -> LabResult:
    """Verify `impl` (a student.py) against the lab's checks."""
    lab = lab or load_lab(info)
    return run_tests(lab, impl, sandbox)


def run_tests(lab: Lab, impl: Path, sandbox: Sandbox) -> LabResult:
    """Run `lab.tests` in order against `impl`."""
    start = time.perf_counter()
    sandbox.start()
    results: list[TestResult] = []
    by_id: dict[str, TestResult] = {}
    first = sandbox.session(str(impl))
    probe = first.ensure()
    if probe is not None and probe.kind == "import":
        err = import_message(probe.exc or {})
        for n, spec in enumerate(lab.tests, 1):
            results.append(
                TestResult(
                    spec.id,
                    n,
                    spec.title,
                    Status.ERROR,
                    [],
                    tr("无法导入 student.py", "cannot import student.py"),
                    points=spec.points,
                    hidden=spec.hidden,
                )
            )
        first.close()
        return _lab_result(lab, impl, sandbox, start, results, err)
    values: dict[str, Any] = {}
    try:
        for n, spec in enumerate(lab.tests, 1):
            result = run_one(spec, n, first, by_id, lab=lab, values=values)
            results.append(result)
            by_id[spec.id] = result
    finally:
        first.close()
    return _lab_result(lab, impl, sandbox, start, results)


def _lab_result(
    lab: Lab, impl: Path, sandbox: Sandbox, start: float, tests: list[TestResult], err: Any = None
) -> LabResult:
    notes = []
    if getattr(sandbox, "memory_limited", True) is False:
        reason = str(getattr(sandbox, "memory_note", ""))
        notes.append(
            tr(
                f"注意：这台机器上无法限制你的代码的内存{('（' + reason + '）') if reason else ''}",
                f"note: your code's memory cannot be limited on this system"
                f"{(' (' + reason + ')') if reason else ''}",
            )
        )
    return LabResult(
        lab.id,
        lab.title,
        str(impl),
        time.perf_counter() - start,
        tests,
        err,
        sandbox=str(getattr(sandbox, "backend", "fork")),
        notes=notes,
    )


def run_one(
    spec: TestSpec,
    n: int,
    session: Session,
    done: dict[str, TestResult],
    *,
    lab: Lab | None = None,
    values: dict[str, Any] | None = None,
) -> TestResult:
    """Run one test after its prerequisites (`done`); `values` holds what tests returned."""
    values = {} if values is None else values
    blocked = [r for r in spec.requires if done[r].status is not Status.PASS]
    if blocked:
        names = ", ".join(f"[TEST {done[r].number}]" for r in blocked)
        if all(done[r].status is Status.TODO for r in blocked):
            # nothing failed yet: the functions it builds on are simply not written
            return TestResult(
                spec.id,
                n,
                spec.title,
                Status.TODO,
                [],
                tr(f"先完成 {names}", f"complete {names} first"),
                points=spec.points,
                hidden=spec.hidden,
            )
        return TestResult(
            spec.id,
            n,
            spec.title,
            Status.SKIP,
            [],
            tr(f"先让 {names} 通过", f"needs {names} to pass first"),
            points=spec.points,
            hidden=spec.hidden,
        )
    prior = {r: values[r] for r in spec.requires if r in values}
    t = TestContext(session, spec.timeout, lab=lab, output=spec.output, prior=prior, hint=spec.hint)
    start = time.perf_counter()
    status = Status.PASS
    try:
        if spec.setup is not None:
            spec.setup(t)
        values[spec.id] = spec.fn(t)
    except Abort as stop:
        if stop.status in (Status.FAIL, Status.ERROR) and not stop.line.hints:
            stop.line.hints = hint_levels(spec.hint)
        t.checks.append(stop.line)
        status = stop.status
    except Exception as e:  # a bug in verify.py, not in the student's code
        t.checks.append(_grader_bug(e))
        status = Status.ERROR
    finally:
        if spec.teardown is not None:
            try:
                spec.teardown(t)
            except Abort:
                pass  # the test already has its status; teardown only cleans up
            except Exception as e:
                t.checks.append(_grader_bug(e))
                status = Status.ERROR
    if status is Status.PASS:
        status = _worst(t.checks)
    if status is Status.PASS and not t.checks:
        status = Status.ERROR
        t.checks.append(
            CheckResult(tr("这个测试没有任何检查", "this test has no checks"), Status.ERROR)
        )
    return TestResult(
        spec.id,
        n,
        spec.title,
        status,
        t.checks,
        None,
        time.perf_counter() - start,
        points=spec.points,
        hidden=spec.hidden,
    )


def _worst(checks: list[CheckResult]) -> Status:
    """A test whose lines all returned: ERROR if a call raised, else FAIL if one failed."""
    statuses = {c.status for c in checks}
    if Status.ERROR in statuses:
        return Status.ERROR
    return Status.FAIL if statuses - {Status.PASS} else Status.PASS


def _grader_bug(e: Exception) -> CheckResult:
    detail = "".join(traceback.format_exception_only(type(e), e)).strip()
    return CheckResult(
        tr("评测程序内部错误", "internal grader error"),
        Status.ERROR,
        tr(
            f"这不是你的代码的问题，请告诉助教：{detail}",
            f"not a problem with your code; please tell the staff: {detail}",
        ),
    )
