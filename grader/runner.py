"""Run one lab's tests against one implementation and collect a `LabResult`.

One sandbox session (a forked child with the student module imported) serves the tests in
order, like one Python process serves a pytest run; a child that timed out, crashed,
flooded its output or ran out of memory is replaced before the next call (see
`Session`). A test whose prerequisite did not pass is SKIP. An exception in verify.py itself
is reported as a grader error (`Status.GRADER`), apart from anything the student did.

What the runner needs of a sandbox is `RunSandbox`: `Sandbox`, `UidSandbox` and the
in-process `InlineSandbox` all have it, and their memory and isolation notes become notes of
the `LabResult`.

Before the first call into student code the grader imports everything it will need for the
report (`grader.sandbox.guard.preload`). A run stopped by Ctrl-C or SIGTERM ends the session and
raises `grader.sandbox.guard.Interrupted` carrying the partial `LabResult`: the tests that finished,
the others SKIP, and a note that says the run was interrupted.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from grader.diagnose import diagnose, load_for
from grader.dsl import Abort, Lab, TestContext, TestSpec, hint_levels
from grader.explain import clean, import_message
from grader.i18n import tr
from grader.labs import LabInfo, load_lab
from grader.results import CheckResult, LabResult, Status, TestResult
from grader.sandbox.guard import Interrupted, preload, signal_name
from grader.sandbox.outcome import CallOutcome, Outcome
from grader.sandbox.session import Session

__all__ = ["RunSandbox", "RunSession", "run_lab", "run_one", "run_tests"]


class RunSession(Protocol):
    """What the runner needs of a session: the import check, and an end."""

    def ensure(self, timeout: float | None = None) -> CallOutcome | None: ...

    def close(self) -> None: ...


class RunSandbox(Protocol):
    """What the runner needs of a sandbox.

    Attributes:
        backend: which backend runs the children (``"fork"``, ``"uid"``, ``"inline"``...).
        memory_limited: whether the OS caps a child's memory.
        memory_note: why not, when it does not ("" otherwise).
        isolation_note: what this sandbox does not isolate ("" when nothing needs saying).
    """

    backend: str
    memory_limited: bool
    memory_note: str
    isolation_note: str

    def start(self) -> None: ...

    def session(self, student_path: str, deadline: float | None = None) -> RunSession: ...


def run_lab(
    info: LabInfo,
    impl: Path,
    sandbox: RunSandbox,
    lab: Lab | None = None,
    *,
    seed: int | None = None,
    until: Callable[[TestResult], bool] | None = None,
) -> LabResult:
    """Verify `impl` (a student.py) against the lab's checks (`seed`, `until`: see
    `run_tests`)."""
    lab = lab or load_lab(info)
    return run_tests(lab, impl, sandbox, seed=seed, until=until)


def run_tests(
    lab: Lab,
    impl: Path,
    sandbox: RunSandbox,
    on_test: Callable[[list[TestResult]], None] | None = None,
    *,
    seed: int | None = None,
    before: Sequence[TestResult] = (),
    until: Callable[[TestResult], bool] | None = None,
) -> LabResult:
    """Run `lab.tests` in order against `impl`; `on_test` sees the results so far after
    each test (`minillm grade` keeps them, so a run cut short keeps what finished).

    `seed` is the run's seed (`TestContext.entropy`): None for the checks' fixed inputs.
    `before` are the results of the lab's first tests, run earlier in another sandbox
    (`minillm grade` runs the hidden tests in a sandbox of their own): only the tests after
    them run here, numbered on from them, and they count as prerequisites.
    `until`: the run stops after the first test it is true for, and the result holds the
    tests up to that one (a test's result depends only on those before it, so each is what
    the whole run gives it): `minillm hint` needs no more.

    Raises:
        Interrupted: the run was stopped (Ctrl-C, or SIGTERM under
            `grader.sandbox.guard.interruptible`); its `result` holds what finished.
    """
    start = time.perf_counter()
    sandbox.start()
    preload()  # nothing is imported here once student code has run (see grader.sandbox.guard)
    results: list[TestResult] = list(before)
    by_id: dict[str, TestResult] = {r.id: r for r in before}
    todo = list(enumerate(lab.tests, 1))[len(before) :]
    first = sandbox.session(str(impl))
    values: dict[str, Any] = {}
    try:
        probe = first.ensure()
        if probe is not None and probe.kind is Outcome.IMPORT:
            err = import_message(probe.error)
            for n, spec in todo:
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
            return _lab_result(lab, impl, sandbox, start, results, err, seed)
        for n, spec in todo:
            session = cast(Session, first)  # the DSL's calls: Session's interface
            test = run_one(spec, n, session, by_id, lab=lab, values=values, seed=seed)
            results.append(test)
            by_id[spec.id] = test
            if on_test is not None:
                on_test(list(results))
            if until is not None and until(test):
                break
    except KeyboardInterrupt as e:
        stop = e if isinstance(e, Interrupted) else Interrupted()
        stop.result = _interrupted(lab, impl, sandbox, start, results, stop.signum)
        raise stop from None
    finally:
        first.close()
    result = _lab_result(lab, impl, sandbox, start, results, seed=seed)
    if lab.folder is not None:  # known bugs, recognised from what the failed checks saw
        diagnose(result, load_for(lab.folder), fixed_seeds=seed is None)
    return result


def _interrupted(
    lab: Lab, impl: Path, sandbox: RunSandbox, start: float, done: list[TestResult], signum: int
) -> LabResult:
    """The result of a run stopped after `done`: the rest SKIP, and a note saying so."""
    tests = list(done)
    for n, spec in enumerate(lab.tests[len(done) :], len(done) + 1):
        tests.append(
            TestResult(
                spec.id,
                n,
                spec.title,
                Status.SKIP,
                [],
                tr("运行被中断，没有执行", "not run: the run was interrupted"),
                points=spec.points,
                hidden=spec.hidden,
            )
        )
    result = _lab_result(lab, impl, sandbox, start, tests)
    name = signal_name(signum)
    result.notes.append(
        tr(
            f"运行被中断（{name}）：只有前 {len(done)} 个测试跑完了",
            f"the run was interrupted ({name}): only the first {len(done)} tests finished",
        )
    )
    return result


def _lab_result(
    lab: Lab,
    impl: Path,
    sandbox: RunSandbox,
    start: float,
    tests: list[TestResult],
    err: Any = None,
    seed: int | None = None,
) -> LabResult:
    notes = []
    if not sandbox.memory_limited:
        reason = sandbox.memory_note
        notes.append(
            tr(
                f"注意：这台机器上无法限制你的代码的内存{('（' + reason + '）') if reason else ''}",
                f"note: your code's memory cannot be limited on this system"
                f"{(' (' + reason + ')') if reason else ''}",
            )
        )
    if sandbox.isolation_note:
        notes.append(tr(f"注意：{sandbox.isolation_note}", f"note: {sandbox.isolation_note}"))
    return LabResult(
        lab.id,
        lab.title,
        str(impl),
        time.perf_counter() - start,
        tests,
        err,
        sandbox=sandbox.backend,
        notes=notes,
        seed=seed,
    )


def run_one(
    spec: TestSpec,
    n: int,
    session: Session,
    done: dict[str, TestResult],
    *,
    lab: Lab | None = None,
    values: dict[str, Any] | None = None,
    seed: int | None = None,
) -> TestResult:
    """Run one test after its prerequisites (`done`); `values` holds what tests returned;
    `seed` is the run's seed (see `run_tests`)."""
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
    t = TestContext(
        session,
        spec.timeout,
        lab=lab,
        output=spec.output,
        prior=prior,
        hint=spec.hint,
        run_seed=seed,
    )
    start = time.perf_counter()
    status, reason = Status.PASS, None
    try:
        if spec.setup is not None:
            spec.setup(t)
        values[spec.id] = spec.fn(t)
    except Abort as stop:
        if stop.status in (Status.FAIL, Status.ERROR, Status.TIMEOUT) and not stop.line.hints:
            stop.line.hints = hint_levels(spec.hint)
        t.checks.append(stop.line)
        status = stop.status
        if status is Status.SKIP:  # `t.skip_for`: the line says which test to fix first
            msg = stop.line.message
            reason = stop.line.name + (tr("：", ": ") + msg if msg is not None else tr("", ""))
    except Exception as e:  # a bug in verify.py, not in the student's code
        t.checks.append(_grader_bug(e))
        status = Status.GRADER
    finally:
        if spec.teardown is not None:
            try:
                spec.teardown(t)
            except Abort:
                pass  # the test already has its status; teardown only cleans up
            except Exception as e:
                t.checks.append(_grader_bug(e))
                status = Status.GRADER
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
        reason,
        time.perf_counter() - start,
        points=spec.points,
        hidden=spec.hidden,
    )


def _worst(checks: list[CheckResult]) -> Status:
    """A test whose lines all returned: GRADER if the grader failed on one (its result is not
    the student's), else ERROR if a call raised, else FAIL if one failed."""
    statuses = {c.status for c in checks}
    if Status.GRADER in statuses:
        return Status.GRADER
    if Status.ERROR in statuses:
        return Status.ERROR
    return Status.FAIL if statuses - {Status.PASS} else Status.PASS


def _grader_bug(e: Exception) -> CheckResult:
    # a verify.py that fails on a student's value may quote it: escaped, on one line
    detail = clean("".join(traceback.format_exception_only(type(e), e)).strip(), one_line=True)
    return CheckResult(
        tr("评测程序内部错误", "internal grader error"),
        Status.GRADER,
        tr(
            f"这不是你的代码的问题，请告诉助教：{detail}",
            f"not a problem with your code; please tell the staff: {detail}",
        ),
    )
