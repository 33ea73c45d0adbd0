"""What grading produced: one `SubmissionResult` per submission, and the batch around them.

A submission's score is the sum of its labs' scores (`LabResult.score`: the points of the
tests that passed, hidden tests included) and its max score the sum of their points. A
submission that could not be graded, in whole or in part (a malformed zip, a worker that
crashed or ran out of time), keeps the labs that finished; `error` says what happened, and
each lab that did not finish is a `LabResult` whose tests are all ERROR with that reason,
so the max score is the same for every submission of a batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from grader.dsl import Lab
from grader.i18n import Text
from grader.results import LabResult, Status, TestResult

__all__ = ["BatchResult", "SubmissionResult", "unfinished_lab"]


@dataclass
class SubmissionResult:
    """One submission's grade.

    Attributes:
        name: how reports name it (its folder or zip name; unique within a batch).
        source: the path it was read from.
        labs: one result per graded lab, in the course's order.
        error: why it was not (fully) graded; "" when it was.
        seconds: wall time of its grading.
        commit: the git commit of a checkout ("" otherwise).
        files: lab id → the path of its student.py inside the submission, as the student
            sees it (``labs/lab04/student.py``), for annotations.
        functions: lab id → {function name: line of its ``def``} in the student's file.
        done: False while it is being graded (a result file written meanwhile says so in
            `error`).
        cut: the run was stopped (a signal) before this submission was finished: its score
            is not a grade.
        error_zh: `error` in Chinese ("" when there is none, or no translation).
        seed: the seed of every random input of its checks (``minillm verify LAB --seed
            SEED`` draws the same inputs).
        dirty: the labs of a git checkout whose working file differs from the commit's (the
            commit is what was graded).
        note: a fact about how it was read ("" when there is none): a dirty tree, or a
            checkout whose commit could not be read (its working tree was graded);
            `note_zh` in Chinese.
    """

    name: str
    source: str
    labs: list[LabResult] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0
    commit: str = ""
    files: dict[str, str] = field(default_factory=dict)
    functions: dict[str, dict[str, int]] = field(default_factory=dict)
    done: bool = True
    cut: bool = False
    error_zh: str = ""
    seed: int | None = None
    dirty: list[str] = field(default_factory=list)
    note: str = ""
    note_zh: str = ""

    def note_in(self, lang: str) -> str:
        """`note` in `lang` ("zh" or "en")."""
        return self.note_zh if lang == "zh" and self.note_zh else self.note

    def error_in(self, lang: str) -> str:
        """`error` in `lang` ("zh" or "en")."""
        return self.error_zh if lang == "zh" and self.error_zh else self.error

    @property
    def score(self) -> float:
        return sum(r.score for r in self.labs)

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.labs)

    def lab(self, lab_id: str) -> LabResult | None:
        """The result of one lab, if it was graded."""
        return next((r for r in self.labs if r.lab == lab_id), None)


@dataclass
class BatchResult:
    """A grading run: its submissions (in the order given) and how it ran.

    Attributes:
        labs: the ids of the graded labs, in order.
        submissions: the results so far.
        isolated: whether every submission ran isolated (bubblewrap or the uid level).
        isolation: which level ran: ``"bwrap"``, ``"uid"`` or ``"none"``.
        complete: False while the run is going (a partial result file says so).
        started: when the run started (seconds since the epoch).
        total: how many submissions the run was given.
        stopped: why the run was stopped before the end ("SIGTERM"), or "".
        finished: how many submissions were graded to the end (set when the run ends).
    """

    labs: list[str]
    submissions: list[SubmissionResult] = field(default_factory=list)
    isolated: bool = False
    isolation: str = "none"
    complete: bool = False
    started: float = field(default_factory=time.time)
    total: int = 0
    stopped: str = ""
    finished: int = 0

    @property
    def max_score(self) -> float:
        """The max score of one submission (every submission has the same)."""
        return max((s.max_score for s in self.submissions), default=0.0)


def unfinished_lab(lab: Lab, reason: Text, impl: str = "") -> LabResult:
    """A lab that did not run for a submission: every test ERROR with `reason`, 0 points."""
    tests = [
        TestResult(
            spec.id,
            n,
            spec.title,
            Status.ERROR,
            [],
            reason,
            points=spec.points,
            hidden=spec.hidden,
        )
        for n, spec in enumerate(lab.tests, 1)
    ]
    return LabResult(lab.id, lab.title, impl, 0.0, tests)
