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

The backends of the three isolation levels (bwrap, uid, none) are in
`grader.grade.backends`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from grader.dsl import Lab
from grader.grade.checks import load_graded_lab
from grader.grade.lanes import in_lanes, started_ahead
from grader.grade.late import LatePolicy
from grader.grade.submission import student_path
from grader.labs import LabInfo
from grader.results import LabResult, TestResult
from grader.runner import run_tests

if TYPE_CHECKING:
    from grader.grade.regrade import Previous
    from grader.grade.roster import Roster
    from grader.sandbox.client import Sandbox

__all__ = ["Backend", "GradeJob", "GradeOptions", "OnResult", "SandboxFor", "run_job"]


@dataclass(frozen=True)
class GradeJob:
    """One submission's work for a backend (see the module docstring); `seed` is the
    submission's own seed for every random input of the checks (`TestContext.entropy`);
    `lanes` how many of its phases may run at once (`run_job`)."""

    course: Path
    private: Path
    work: Path
    labs: tuple[str, ...]
    seed: int | None = None
    hide: tuple[Path, ...] = ()  # what no sandbox may see: the instructor's course, results
    lanes: int = 1  # phases run at once (`grader.grade.lanes.lanes_for`)

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
            max(1, int(data.get("lanes", 1))),
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
    job: GradeJob,
    sandbox_for: SandboxFor,
    on_result: OnResult,
    on_partial: OnResult | None,
    lanes: int = 1,
) -> None:
    """Every lab of `job`, each in fresh sandboxes of its own (what each backend does).

    Nothing crosses from one sandbox to the next: every lab's public tests get a new
    sandbox (a new scratch folder and ``/tmp``), and the hidden tests run after every
    public test of the job, each lab's in yet another sandbox, so that nothing a hidden test
    hands to the student's code can reach output a student sees. The next sandbox starts
    while the current one runs, so that it is warm when it is needed
    (`grader.grade.lanes.started_ahead`). With `lanes` above 1, that many phases run at
    once (`grader.grade.lanes.in_lanes`): every public phase has ended before the first
    hidden one starts, and `on_result` and `on_partial` are called one at a time.
    """
    labs = {}
    for lab_id in job.labs:
        info = LabInfo(lab_id, job.course / "labs" / lab_id)
        labs[lab_id] = load_graded_lab(info, solutions=job.private)
    public = [(lab_id, False) for lab_id in job.labs]
    hidden = [(i, True) for i in job.labs if any(s.hidden for s in labs[i].tests)]
    done: dict[str, LabResult] = {}  # each lab's public result, once it ran
    lock = threading.Lock()

    def partial(result: LabResult) -> None:  # from a lane's thread: one at a time
        with lock:
            if on_partial is not None:
                on_partial(result)

    progress = partial if on_partial is not None else None

    def run(phase: tuple[str, bool], sandbox: Sandbox) -> None:
        lab_id, is_hidden = phase
        try:
            result = _phase(job, labs[lab_id], sandbox, is_hidden, done, progress)
        finally:
            sandbox.close()
        with lock:
            if lab_id in done:
                result.seconds += done[lab_id].seconds
            done[lab_id] = result
            if len(result.tests) == len(labs[lab_id].tests):
                on_result(result)
            elif on_partial is not None:
                on_partial(result)

    def make(phase: tuple[str, bool]) -> Sandbox:
        return sandbox_for(*phase)

    if lanes <= 1:  # in this thread, the hidden phases' first sandbox started ahead too
        with contextlib.closing(started_ahead(public + hidden, make)) as ahead:
            for phase, sandbox in ahead:
                run(phase, sandbox)
        return
    for phases in (public, hidden):  # every public phase ends before a hidden one starts
        in_lanes(phases, lanes, make, run)


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


@dataclass(frozen=True)
class GradeOptions:
    """How a batch runs.

    Attributes:
        labs: the lab ids to grade, in order.
        jobs: submissions graded at the same time.
        timeout: seconds one submission may take in all (None: 60 + 30 per lab): CPU
            seconds of its own tree where they can be measured (`over_budget`).
        isolation: the backend, ``"none"``, ``"uid"`` or ``"bwrap"`` (see `grader.grade.run`).
        seed: the run's seed (``--seed``), or None to draw each submission's at random.
        hide: folders no sandbox may see wherever they are (besides the instructor's
            course, which is always hidden): the folders of the result files.
        due: the deadline, seconds since the epoch (``--deadline``; None: none).
        late: what a version after it gets (``--late-policy``, `grader.grade.late`).
        roster: the class (``--roster``, `grader.grade.roster`), or None.
        previous: the result to regrade from (``--previous``, `grader.grade.regrade`).
        only: (labs to rerun joined by commas, a test id) of ``--only-lab`` and
            ``--only-test`` (with `previous`), or ("", "").
        lanes: phases one submission runs at once, or None for as many as the cores
            allow beside the other submissions graded at once (`grader.grade.lanes`).
    """

    labs: tuple[str, ...]
    jobs: int = 2
    timeout: float | None = None
    isolation: str = "none"
    seed: int | None = None
    hide: tuple[Path, ...] = ()
    due: int | None = None
    late: LatePolicy = field(default_factory=LatePolicy)
    roster: Roster | None = None
    previous: Previous | None = None
    only: tuple[str, str] = ("", "")
    lanes: int | None = None

    def seed_of(self, name: str) -> int:
        """The seed of the submission called `name`: drawn at random for each submission,
        or, with a `seed` for the run, derived from it and the name (a regrade then draws
        the same inputs)."""
        if self.seed is None:
            return secrets.randbelow(2**63)
        digest = hashlib.sha256(f"{self.seed}\0{name}".encode()).digest()
        return int.from_bytes(digest[:8], "big") >> 1

    @property
    def seconds(self) -> float:
        return self.timeout if self.timeout is not None else 60.0 + 30.0 * len(self.labs)
