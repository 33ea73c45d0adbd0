"""The seam where one submission's labs run: a backend takes a `GradeJob`, returns results.

A `GradeJob` names the pristine course (`course`, mounted read-only where the backend can),
the hidden checks (`private`, read only by the grader's side), the submission's folder
(`work`, holding ``labs/<id>/student.py`` and nothing else) and the labs to run. A
`Backend` runs them in order, public and hidden checks, and hands each `LabResult` to
`on_result` as soon as it is complete, and, if `on_partial` is given, the unfinished lab
after each of its tests (a `LabResult` holding the tests that ran so far):

    class Backend(Protocol):
        isolated: bool
        def run(self, job: GradeJob, on_result: OnResult,
                on_partial: OnResult | None = None) -> None: ...

`PlainBackend` uses the ordinary sandbox (`grader.sandbox`): student code runs in a child
process, but as the grader's own user, able to read the course and signal its grader.
The isolation backend lives in ``grader/isolation.py`` and provides:

    def unavailable() -> str | None
        None when bubblewrap and user namespaces work here, else one message that says
        what is missing and how to install or enable it;
    class IsolatedBackend:  # isolated = True
        run(job, on_result): the same as PlainBackend.run, with each submission's code
        under bubblewrap (new user, pid, mount, network and IPC namespaces; `job.course`
        read-only; `job.work` the only submission files; `job.private`, solutions and
        other submissions not mounted; a capped tmpfs as scratch and /tmp).

`choose_backend` picks it when asked for isolation. Until that module exists, a grade
without ``--no-isolation`` falls back to the plain backend and every report says, on its
first line, that the run was NOT isolated; once it exists and is unavailable here, grading
refuses to start unless ``--no-isolation`` is given.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from grader.grade.checks import load_graded_lab
from grader.grade.submission import student_path
from grader.labs import LabInfo
from grader.results import LabResult, TestResult
from grader.runner import run_tests

if TYPE_CHECKING:
    from grader.dsl import Lab
    from grader.sandbox.client import Sandbox

__all__ = [
    "Backend",
    "GradeJob",
    "IsolationUnavailable",
    "OnResult",
    "PlainBackend",
    "backend_for",
    "choose_isolation",
    "run_job",
]

ISOLATION_MODULE = "grader.isolation"


@dataclass(frozen=True)
class GradeJob:
    """One submission's work for a backend (see the module docstring)."""

    course: Path
    private: Path
    work: Path
    labs: tuple[str, ...]

    def student(self, lab_id: str) -> Path:
        """The submission's file for a lab, inside `work`."""
        return self.work / student_path(lab_id)

    def dumps(self) -> str:
        data = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}
        data["labs"] = list(self.labs)
        return json.dumps(data)

    @staticmethod
    def loads(text: str) -> GradeJob:
        data = json.loads(text)
        return GradeJob(
            Path(data["course"]),
            Path(data["private"]),
            Path(data["work"]),
            tuple(str(x) for x in data["labs"]),
        )


OnResult = Callable[[LabResult], None]


class Backend(Protocol):
    """Runs a job's labs (see the module docstring)."""

    isolated: bool

    def run(
        self, job: GradeJob, on_result: OnResult, on_partial: OnResult | None = None
    ) -> None: ...


def run_job(
    job: GradeJob, sandbox: Sandbox, on_result: OnResult, on_partial: OnResult | None
) -> None:
    """Every lab of `job` in `sandbox`, in order (what each backend does in its sandbox)."""
    for lab_id in job.labs:
        info = LabInfo(lab_id, job.course / "labs" / lab_id)
        lab = load_graded_lab(info, solutions=job.private)
        impl = student_path(lab_id)

        def progress(done: list[TestResult], lab: Lab = lab, impl: str = impl) -> None:
            if on_partial is not None and len(done) < len(lab.tests):
                on_partial(LabResult(lab.id, lab.title, impl, 0.0, done))

        result = run_tests(lab, job.student(lab_id), sandbox, progress)
        result.impl = impl
        on_result(result)


class PlainBackend:
    """The ordinary sandbox: one sandbox for the job, each lab's tests in order."""

    isolated = False

    def run(self, job: GradeJob, on_result: OnResult, on_partial: OnResult | None = None) -> None:
        from grader.sandbox.client import Sandbox

        with Sandbox() as sandbox:
            run_job(job, sandbox, on_result, on_partial)


class IsolationUnavailable(RuntimeError):
    """Isolation was asked for and its backend exists, but cannot run here."""


def choose_isolation(wanted: bool) -> tuple[str, str]:
    """Which backend a run uses: ("bwrap", "") or ("none", why it is not isolated).

    Raises:
        IsolationUnavailable: isolation was wanted, its backend exists and says it cannot
            run here (the message says how to fix that, or to pass --no-isolation).
    """
    if not wanted:
        return "none", "--no-isolation"
    try:
        module = importlib.import_module(ISOLATION_MODULE)
    except ModuleNotFoundError as e:
        if e.name != ISOLATION_MODULE:
            raise
        return "none", "this grader has no isolation backend (grader/isolation.py)"
    problem = module.unavailable()
    if problem:
        raise IsolationUnavailable(
            f"{problem}\n(or grade without isolation, trusting the submissions: --no-isolation)"
        )
    return "bwrap", ""


def backend_for(name: str) -> Backend:
    """The backend called `name` ("none" or "bwrap")."""
    if name == "none":
        return PlainBackend()
    if name == "bwrap":
        backend: Backend = importlib.import_module(ISOLATION_MODULE).IsolatedBackend()
        return backend
    raise ValueError(f"unknown isolation backend {name!r}")
