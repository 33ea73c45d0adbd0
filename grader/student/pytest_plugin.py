"""A pytest plugin: `pytest labs/lab04` runs that lab's verify tests as pytest items.

Each `@lab.test` of a `labs/labNN/verify.py` becomes one item, so IDE test explorers list
them (at the test's own line of verify.py) and `-k`, `-x` and `--lf` work. As with
`minillm verify`, one sandbox child serves all of a lab's tests in a pytest run, and a
failing item shows the same block as the verify report; a TODO test (its stub still raises
`NotImplementedError`) is skipped with reason ``TODO: …``, as `make test` counts it TODO
rather than FAIL. A selected test whose
prerequisites were deselected (``-k``) runs them first, silently: their results decide
whether it runs, as in a full run. Options: ``--minillm-impl solution`` (the reference) or
``--minillm-impl PATH`` (a file of tests/mutants runs as the solution plus its overrides);
``--minillm-lang en``; ``--minillm-no-sandbox`` (debugging: the student's code runs in the
pytest process, so breakpoints work and ``--pdb`` stops at the student's own line; the
header says so, and nothing guards time or memory then).

Registered through the ``pytest11`` entry point; it only collects files named verify.py
inside ``labs/labNN/`` folders and changes nothing else. Built like pytest's own
`DoctestItem` (``_pytest/doctest.py``): a File collector that yields custom Items.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import cast

import pytest

import grader
from grader.course.mutants import as_student
from grader.dsl import Lab, TestSpec
from grader.errors import GraderError
from grader.explain import import_message
from grader.i18n import Text, default_lang, tr
from grader.labs import LabInfo, load_lab
from grader.render.lab import render_test_block
from grader.results import Status, TestResult
from grader.runner import run_one
from grader.sandbox.client import Sandbox
from grader.sandbox.inline import InlineSandbox
from grader.sandbox.outcome import Outcome
from grader.sandbox.session import Session

# Importing the grader stops this process from writing bytecode, and this process is
# pytest's: put the user's choice back, or pytest rewrites the asserts of every plugin
# package (hypothesis, xdist, ...: 0.8 s) again on each run instead of once. Student code
# still runs in sandbox children, which write nothing.
sys.dont_write_bytecode = grader.USER_DONT_WRITE_BYTECODE

__all__ = ["VerifyFailure", "VerifyFile", "VerifyItem", "todo_reason"]

_LAB_DIR = re.compile(r"^lab\d\d$")
_SANDBOX_KEY = pytest.StashKey[Sandbox | InlineSandbox]()
_FILES_KEY = pytest.StashKey[ExitStack]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("minillm", "miniLLM lab verify tests")
    group.addoption(
        "--minillm-impl",
        default=None,
        help="'solution', or a path to a student.py (default: the lab's own)",
    )
    group.addoption(
        "--minillm-lang", default=None, choices=("zh", "en"), help="language of failure reports"
    )
    group.addoption(
        "--minillm-no-sandbox",
        action="store_true",
        default=False,
        help="debugging: run the student's code inside this process (breakpoints and --pdb "
        "work; no timeouts, no output capture, no isolation)",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    if not config.getoption("--minillm-no-sandbox"):
        return None
    return (
        "minillm: --minillm-no-sandbox: your code runs inside this pytest process, for "
        "debugging (no timeouts, no isolation); an error stops at your line with --pdb"
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == "verify.py" and _LAB_DIR.match(file_path.parent.name):
        return VerifyFile.from_parent(parent, path=file_path)
    return None


def pytest_unconfigure(config: pytest.Config) -> None:
    sandbox = config.stash.get(_SANDBOX_KEY, None)
    if sandbox is not None:
        sandbox.close()
    files = config.stash.get(_FILES_KEY, None)
    if files is not None:
        files.close()


def _sandbox(config: pytest.Config) -> Sandbox | InlineSandbox:
    """The pytest run's one sandbox (its zygote), started on first use."""
    if _SANDBOX_KEY not in config.stash:
        inline = config.getoption("--minillm-no-sandbox")
        config.stash[_SANDBOX_KEY] = InlineSandbox() if inline else Sandbox()
    sandbox = config.stash[_SANDBOX_KEY]
    sandbox.start()
    return sandbox


def _files(config: pytest.Config) -> ExitStack:
    """Temporary files (built mutants) that live until the pytest run ends."""
    if _FILES_KEY not in config.stash:
        config.stash[_FILES_KEY] = ExitStack()
    return config.stash[_FILES_KEY]


def _lang(config: pytest.Config) -> str:
    return str(config.getoption("--minillm-lang") or default_lang())


class VerifyFile(pytest.File):
    """The tests of one lab's verify.py, and the sandbox session that serves them."""

    lab: Lab
    impl: Path
    results: dict[str, TestResult]
    values: dict[str, object]  # what each test returned, for the tests that require it
    import_error: Text | None = None
    errors: dict[str, BaseException]  # without the sandbox: what the student's code raised
    _session: Session | None = None

    def collect(self) -> Iterator[VerifyItem]:
        info = LabInfo(self.path.parent.name, self.path.parent)
        self.lab = load_lab(info)
        choice = self.config.getoption("--minillm-impl")
        if choice is None:
            self.impl = info.student
        elif choice == "solution":
            self.impl = info.solution
        else:  # a mutant file runs as the solution plus its overrides
            self.impl = _files(self.config).enter_context(as_student(Path(choice).resolve(), info))
        self.results = {}
        self.values = {}
        self.errors = {}
        for number, spec in enumerate(self.lab.tests, 1):
            item = VerifyItem.from_parent(self, name=spec.id)
            item.spec, item.number = spec, number
            yield item

    def result(self, test_id: str) -> TestResult:
        """The result of test `test_id`; runs it, after its prerequisites, if not yet run."""
        if test_id in self.results:
            return self.results[test_id]
        number, spec = next((n, s) for n, s in enumerate(self.lab.tests, 1) if s.id == test_id)
        for required in spec.requires:
            self.result(required)
        session = self._open()
        if self.import_error is not None:
            cannot = tr("无法导入 student.py", "cannot import student.py")
            result = TestResult(spec.id, number, spec.title, Status.ERROR, [], cannot)
        else:
            result = run_one(spec, number, session, self.results, lab=self.lab, values=self.values)
            error = getattr(session, "last_error", None)
            if result.status is Status.ERROR and isinstance(error, BaseException):
                self.errors[test_id] = error
        self.results[test_id] = result
        return result

    def _open(self) -> Session:
        """The lab's session: one child, forked on first use (and replaced if it misbehaves)."""
        if self._session is None:
            # an InlineSession serves the same calls as a Session (see sandbox/inline.py)
            self._session = cast(Session, _sandbox(self.config).session(str(self.impl)))
            probe = self._session.ensure()
            if probe is not None and probe.kind is Outcome.IMPORT:
                self.import_error = import_message(probe.error)
        return self._session

    def teardown(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


class VerifyItem(pytest.Item):
    """One `@lab.test`, run in the lab's sandbox session."""

    spec: TestSpec
    number: int

    @property
    def lab_file(self) -> VerifyFile:
        parent = self.parent
        assert isinstance(parent, VerifyFile)
        return parent

    def runtest(self) -> None:
        result = self.lab_file.result(self.spec.id)
        if result.status is Status.SKIP:
            pytest.skip(result.reason.pick(_lang(self.config)) if result.reason else "")
        if result.status is Status.TODO:  # not written yet: not a failure, as in `make test`
            # reported at the test's line of verify.py (reportinfo), as pytest's own skip marks
            raise pytest.skip.Exception(
                todo_reason(result, _lang(self.config)), _use_item_location=True
            )
        error = self.lab_file.errors.get(self.spec.id)
        if error is not None:  # without the sandbox: the student's own traceback, for --pdb
            raise error
        if result.status is not Status.PASS:
            raise VerifyFailure(result)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: str | None = None
    ) -> str:
        if not isinstance(excinfo.value, VerifyFailure):
            return str(super().repr_failure(excinfo))
        lang = _lang(self.config)
        lines = [
            "".join(seg for seg, _ in line)
            for line in render_test_block(excinfo.value.result, lang)
        ]
        error = self.lab_file.import_error
        if error is not None:
            lines += ["  " + row for row in error.pick(lang).splitlines()]
        return "\n".join(lines)

    def reportinfo(self) -> tuple[Path, int, str]:
        """verify.py, the 0-based line where the test is declared, and its `[TEST n]` title."""
        try:
            line = inspect.unwrap(self.spec.fn).__code__.co_firstlineno - 1
        except AttributeError:  # not a plain function: point at the file
            line = 0
        title = self.spec.title.pick(_lang(self.config))
        return self.path, line, f"[TEST {self.number}] {title}"


def todo_reason(result: TestResult, lang: str) -> str:
    """The skip reason of a TODO test: ``TODO: `` and what is left to write.

    Example: ``TODO: add_one is not implemented yet`` (a stub), ``TODO: complete [TEST 1]
    first`` (a test whose prerequisite is still TODO).
    """
    todo = next((c for c in result.checks if c.status is Status.TODO), None)
    what = result.reason or (todo.name if todo is not None else None)
    return "TODO: " + (what.pick(lang) if what is not None else "not written yet")


class VerifyFailure(GraderError):
    """A verify test that did not pass."""

    def __init__(self, result: TestResult) -> None:
        super().__init__(result.status.value)
        self.result = result
