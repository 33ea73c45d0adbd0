"""A pytest plugin: `pytest labs/lab04` runs that lab's verify tests as pytest items.

Each `@lab.test` of a `labs/labNN/verify.py` becomes one item, so IDE test explorers list
them and `-k`, `-x` and `--lf` work. Calls still go to the sandbox; a failing item shows the
same lines as the verify report. Options: ``--minillm-impl solution`` (the reference) or
``--minillm-impl PATH``; ``--minillm-lang en``.

Registered through the ``pytest11`` entry point; it only collects files named verify.py
inside ``labs/labNN/`` folders and changes nothing else.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from grader.i18n import default_lang
from grader.labs import LabInfo, load_lab
from grader.report import render_lines
from grader.results import LabResult, Status, TestResult
from grader.runner import run_one
from grader.sandbox.client import Sandbox

_LAB_DIR = re.compile(r"^lab\d\d$")
_SANDBOX_KEY = pytest.StashKey[Sandbox]()
_DONE_KEY = pytest.StashKey[dict[str, TestResult]]()


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


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == "verify.py" and _LAB_DIR.match(file_path.parent.name):
        return VerifyFile.from_parent(parent, path=file_path)
    return None


def pytest_unconfigure(config: pytest.Config) -> None:
    sandbox = config.stash.get(_SANDBOX_KEY, None)
    if sandbox is not None:
        sandbox.close()


class VerifyFile(pytest.File):
    """The tests of one lab's verify.py."""

    def collect(self) -> Any:
        info = LabInfo(self.path.parent.name, self.path.parent)
        lab = load_lab(info)
        choice = self.config.getoption("--minillm-impl")
        impl = (
            info.student
            if choice is None
            else (info.solution if choice == "solution" else Path(choice).resolve())
        )
        for number, spec in enumerate(lab.tests, 1):
            item = VerifyItem.from_parent(self, name=spec.id, spec=spec, number=number, impl=impl)
            item.lab_title = lab.title
            yield item


class VerifyItem(pytest.Item):
    """One `@lab.test`, run in the sandbox."""

    def __init__(self, *, spec: Any, number: int, impl: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.number = number
        self.impl = impl
        self.lab_title: Any = None
        self.result: TestResult | None = None

    def runtest(self) -> None:
        config = self.config
        if _SANDBOX_KEY not in config.stash:
            config.stash[_SANDBOX_KEY] = Sandbox()
            config.stash[_DONE_KEY] = {}
        sandbox, done = config.stash[_SANDBOX_KEY], config.stash[_DONE_KEY]
        sandbox.start()
        missing = [r for r in self.spec.requires if r not in done]
        for r in missing:  # prerequisites deselected with -k: treat as not run
            done[r] = TestResult(r, 0, self.spec.title, Status.SKIP)
        session = sandbox.session(str(self.impl))
        try:
            self.result = run_one(self.spec, self.number, session, done)
        finally:
            session.close()
        done[self.spec.id] = self.result
        if self.result.status is Status.SKIP:
            reason = self.result.reason.pick(self._lang()) if self.result.reason else ""
            pytest.skip(reason)
        if self.result.status is not Status.PASS:
            raise VerifyFailure(self.result)

    def _lang(self) -> str:
        return str(self.config.getoption("--minillm-lang") or default_lang())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, VerifyFailure):
            result = LabResult("", self.lab_title, str(self.impl), 0.0, [excinfo.value.result])
            lines = render_lines(result, self._lang())[4:-4]  # the test block only
            return "\n".join("".join(seg for seg, _ in line) for line in lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"[TEST {self.number}] {self.spec.title.pick(self._lang())}"


class VerifyFailure(Exception):
    """A verify test that did not pass."""

    def __init__(self, result: TestResult) -> None:
        super().__init__(result.status.value)
        self.result = result
