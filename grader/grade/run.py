"""The seam where one submission's labs run: a backend takes a `GradeJob`, returns results.

A `GradeJob` names the pristine course (`course`, mounted read-only where the backend can),
the hidden checks (`private`, read only by the grader's side), the submission's folder
(`work`, holding ``labs/<id>/student.py`` and nothing else), the labs to run and the
submission's seed. A `Backend` runs them (`run_job`: each lab's public tests in a sandbox
of its own, then each lab's hidden tests in another), and hands each `LabResult` to
`on_result` as soon as it is complete, and, if `on_partial` is given, the unfinished lab
after each of its tests (a `LabResult` holding the tests that ran so far):

    class Backend(Protocol):
        isolated: bool
        level: str    # "none", "uid" or "bwrap"
        def run(self, job: GradeJob, on_result: OnResult,
                on_partial: OnResult | None = None) -> None: ...

Three levels (`choose_isolation`, `backend_for`):

- ``bwrap`` (`grader.isolation.IsolatedBackend`): each sandbox under bubblewrap, in
  namespaces of its own, seeing the course's packages and the lab's own file only;
- ``uid`` (`grader.isolation.UidBackend`): where bubblewrap cannot make namespaces but the
  grader is root (a Docker or Gradescope container): each sandbox's children run as an
  unprivileged uid of their own, and what they must not read is root's only
  (`grader.sandbox.uidlevel`);
- ``none`` (`PlainBackend`, ``--no-isolation``): the ordinary sandbox, as the grader's own
  user, able to read the course; every report says NOT isolated on its first line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from grader.dsl import Lab
from grader.grade.checks import load_graded_lab
from grader.grade.submission import student_path
from grader.labs import LabInfo
from grader.results import LabResult, TestResult
from grader.runner import run_tests

if TYPE_CHECKING:
    from grader.sandbox.client import Sandbox

__all__ = [
    "LEVELS",
    "Backend",
    "GradeJob",
    "IsolationUnavailable",
    "OnResult",
    "PlainBackend",
    "backend_for",
    "choose_isolation",
    "run_job",
]


@dataclass(frozen=True)
class GradeJob:
    """One submission's work for a backend (see the module docstring); `seed` is the
    submission's own seed for every random input of the checks (`TestContext.entropy`)."""

    course: Path
    private: Path
    work: Path
    labs: tuple[str, ...]
    seed: int | None = None
    hide: tuple[Path, ...] = ()  # what no sandbox may see: the instructor's course, results

    def student(self, lab_id: str) -> Path:
        """The submission's file for a lab, inside `work`."""
        return self.work / student_path(lab_id)

    def dumps(self) -> str:
        data = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}
        data["labs"] = list(self.labs)
        data["hide"] = [str(p) for p in self.hide]
        return json.dumps(data)

    @staticmethod
    def loads(text: str) -> GradeJob:
        data = json.loads(text)
        seed = data.get("seed")
        return GradeJob(
            Path(data["course"]),
            Path(data["private"]),
            Path(data["work"]),
            tuple(str(x) for x in data["labs"]),
            int(seed) if seed is not None else None,
            tuple(Path(p) for p in data.get("hide", [])),
        )


OnResult = Callable[[LabResult], None]


class Backend(Protocol):
    """Runs a job's labs (see the module docstring)."""

    isolated: bool

    def run(
        self, job: GradeJob, on_result: OnResult, on_partial: OnResult | None = None
    ) -> None: ...


SandboxFor = Callable[[str, bool], "Sandbox"]  # (lab id, hidden) -> a new sandbox


def run_job(
    job: GradeJob, sandbox_for: SandboxFor, on_result: OnResult, on_partial: OnResult | None
) -> None:
    """Every lab of `job`, each in fresh sandboxes of its own (what each backend does).

    Nothing crosses from one sandbox to the next: every lab's public tests get a new
    sandbox (a new scratch folder and ``/tmp``), and the hidden tests run after every
    public test of the job, each lab's in yet another sandbox, so that nothing a hidden test
    hands to the student's code can reach output a student sees. The next sandbox starts
    while the current one runs, so that it is warm when it is needed.
    """
    labs = {}
    for lab_id in job.labs:
        info = LabInfo(lab_id, job.course / "labs" / lab_id)
        labs[lab_id] = load_graded_lab(info, solutions=job.private)
    phases = [(lab_id, False) for lab_id in job.labs]
    phases += [(i, True) for i in job.labs if any(s.hidden for s in labs[i].tests)]
    done: dict[str, LabResult] = {}  # each lab's public result, once it ran
    pending: Sandbox | None = None
    try:
        for n, (lab_id, hidden) in enumerate(phases):
            sandbox = pending if pending is not None else sandbox_for(lab_id, hidden)
            pending = None
            sandbox.start()
            if n + 1 < len(phases):
                pending = sandbox_for(*phases[n + 1])
                pending.start()
            try:
                result = _phase(job, labs[lab_id], sandbox, hidden, done, on_partial)
            finally:
                sandbox.close()
            if lab_id in done:
                result.seconds += done[lab_id].seconds
            done[lab_id] = result
            if len(result.tests) == len(labs[lab_id].tests):
                on_result(result)
            elif on_partial is not None:
                on_partial(result)
    finally:
        if pending is not None:
            pending.close()


def _phase(
    job: GradeJob,
    lab: Lab,
    sandbox: Sandbox,
    hidden: bool,
    done: dict[str, LabResult],
    on_partial: OnResult | None,
) -> LabResult:
    """One lab's public tests (the ones before its first hidden test), or its hidden ones
    after the public results in `done`."""
    impl = student_path(lab.id)
    first_hidden = next((n for n, s in enumerate(lab.tests) if s.hidden), len(lab.tests))
    if hidden:
        before = done[lab.id].tests if lab.id in done else []
        scope = lab
    else:
        before = []
        scope = Lab(lab.id, lab.title.zh, lab.title.en)
        scope.tests, scope.forbidden = lab.tests[:first_hidden], lab.forbidden

    def progress(so_far: list[TestResult]) -> None:
        if on_partial is not None and len(so_far) < len(lab.tests):
            on_partial(LabResult(lab.id, lab.title, impl, 0.0, so_far))

    result = run_tests(scope, job.student(lab.id), sandbox, progress, seed=job.seed, before=before)
    result.impl = impl
    return result


class PlainBackend:
    """The ordinary sandbox, a new one for each lab's public tests and for its hidden ones."""

    isolated = False
    level = "none"

    def run(self, job: GradeJob, on_result: OnResult, on_partial: OnResult | None = None) -> None:
        from grader.sandbox.client import Sandbox

        run_job(job, lambda lab_id, hidden: Sandbox(), on_result, on_partial)


class IsolationUnavailable(RuntimeError):
    """The isolation that was asked for cannot run here (the message says why and how to
    fix it)."""


LEVELS = ("auto", "bwrap", "uid")  # what ``--isolation`` takes; "none" is --no-isolation


def choose_isolation(wanted: bool, level: str = "auto") -> tuple[str, str]:
    """Which backend a run uses, and a line on why not a stronger one ("" for bwrap).

    ``auto``: bubblewrap where it runs; else, as root, the uid level (a Docker or
    Gradescope container: user namespaces refused, but root); else refuse. ``bwrap`` and
    ``uid`` ask for that level only. Not `wanted` (``--no-isolation``): ``"none"``.

    Raises:
        IsolationUnavailable: no level that was asked for can run here; the message says
            how to fix that, or to pass --no-isolation.
    """
    if not wanted:
        return "none", "--no-isolation"
    if level not in LEVELS:
        raise ValueError(f"unknown isolation level {level!r} (expected one of {LEVELS})")
    from grader.sandbox.bwrap import unavailable
    from grader.sandbox.uidlevel import uid_unavailable

    no_bwrap = unavailable() if level in ("auto", "bwrap") else "not asked for"
    if no_bwrap is None:
        return "bwrap", ""
    no_uid = uid_unavailable() if level in ("auto", "uid") else "not asked for"
    if no_uid is None:
        return "uid", no_bwrap if level == "auto" else "--isolation uid"
    problem = no_bwrap if level != "uid" else no_uid
    if level == "auto":
        problem += f"\n(the uid level cannot run either: {no_uid})"
    raise IsolationUnavailable(
        f"{problem}\n(or grade without isolation, trusting the submissions: --no-isolation)"
    )


def backend_for(name: str) -> Backend:
    """The backend called `name` ("none", "uid" or "bwrap")."""
    if name == "none":
        return PlainBackend()
    if name in ("bwrap", "uid"):
        from grader.isolation import IsolatedBackend, UidBackend

        return IsolatedBackend() if name == "bwrap" else UidBackend()
    raise ValueError(f"unknown isolation backend {name!r}")
