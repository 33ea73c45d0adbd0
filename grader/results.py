"""What the grader produces: check, test and lab results (a verify run), and what grading
makes of them: one submission's result and a batch of them.

A submission's score is the sum of its labs' scores (`LabResult.score`: the points of the
tests that passed, hidden tests included) and its max score the sum of their points. A
submission that could not be graded, in whole or in part (a malformed zip, a worker that
crashed or ran out of time), keeps the labs that finished; `error` says what happened, and
each lab that did not finish is a `LabResult` whose tests are all ERROR with that reason
(`grader.grade.batch.unfinished_lab`), so the max score is the same for every submission of
a batch. Their renderings are in `grader.render`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from grader.i18n import Text

__all__ = [
    "BatchResult",
    "CheckResult",
    "Diagnosis",
    "LabResult",
    "Status",
    "SubmissionResult",
    "TestResult",
]


class Status(StrEnum):
    """Outcome of a check or a test.

    `GRADER` is the grader's own failure (a bug in a verify.py, a request the grader could
    not send to the sandbox), kept apart from anything the student did: it is never the
    student's FAIL or ERROR, and only the grader's side sets it (no reply of the sandbox
    child, which runs the student's code, can).
    """

    PASS = "PASS"
    FAIL = "FAIL"
    TODO = "TODO"
    ERROR = "ERROR"
    TIMEOUT = "TIMEOUT"
    SKIP = "SKIP"
    GRADER = "GRADER"


@dataclass(frozen=True)
class Diagnosis:
    """A known bug that a failed check's result looks like: the catalogued wrong
    implementation's id (``tests/mutants/<lab>/<bug>.py``) and its own words."""

    bug: str
    text: Text


@dataclass
class CheckResult:
    """One assertion line of the report.

    `evidence` is what a failed check saw, reduced to a fingerprint (`grader.diagnose`),
    kept in the grader's process only; `diagnosis` is the known bug it matches, if any.
    """

    name: Text
    status: Status
    message: Text | None = None
    output: str = ""  # what the student's code printed (as much as was kept)
    output_bytes: int = 0  # how much it printed in all
    hints: list[Text] = field(default_factory=list)  # from a nudge to the concrete next step
    diagnosis: Diagnosis | None = None
    evidence: dict[str, object] | None = field(default=None, repr=False, compare=False)


@dataclass
class TestResult:
    """One `[TEST n]` block."""

    __test__ = False  # not a pytest class

    id: str
    number: int
    title: Text
    status: Status
    checks: list[CheckResult] = field(default_factory=list)
    reason: Text | None = None
    seconds: float = 0.0
    points: float = 1.0  # weight in a grade (`minillm grade`); 0 for practice tests
    hidden: bool = False  # instructors' check: not shown to students before grading


@dataclass
class LabResult:
    """A whole verify run of one lab against one implementation."""

    lab: str
    title: Text
    impl: str
    seconds: float
    tests: list[TestResult]
    import_error: Text | None = None
    sandbox: str = ""  # which sandbox backend ran the student's code ("fork" or "spawn")
    notes: list[Text] = field(default_factory=list)  # one-line facts about the run itself
    seed: int | None = None  # the run's seed (`minillm grade`, `verify --seed`); None: fixed

    @property
    def passed(self) -> bool:
        return bool(self.tests) and all(t.status is Status.PASS for t in self.tests)

    def summary(self) -> dict[str, int]:
        """Counts of tests by status (the JSON `summary`); `grader_error` counts the tests
        that the grader itself failed (`Status.GRADER`), not the student."""
        counts = {s.value.lower(): 0 for s in Status}
        for t in self.tests:
            counts[t.status.value.lower()] += 1
        return {
            "total": len(self.tests),
            "passed": counts["pass"],
            "failed": counts["fail"],
            "todo": counts["todo"],
            "error": counts["error"],
            "timeout": counts["timeout"],
            "skipped": counts["skip"],
            "grader_error": counts["grader"],
        }

    def check_counts(self) -> dict[Status, int]:
        """Counts of individual checks by status."""
        counts = {s: 0 for s in Status}
        for t in self.tests:
            for c in t.checks:
                counts[c.status] += 1
        return counts

    @property
    def score(self) -> float:
        """Points of the tests that passed."""
        return sum(t.points for t in self.tests if t.status is Status.PASS)

    @property
    def max_score(self) -> float:
        """Points of every test."""
        return sum(t.points for t in self.tests)


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
        student_id, student_name, email, section: the roster's row (``--roster``; "" when
            there is none).
        on_roster: whether a roster lists it (None: no roster was given).
        missing: nothing was graded by rule, not by failure: a roster student without a
            submission, or one with no version on time (`error` says which); 0 points.
        commit_date: the committer time of the graded commit (ISO 8601, ``--deadline``).
        submitted_at: the time its lateness was judged by: the commit date, or the
            roster's ``submitted_at`` for a folder or zip ("" when not judged).
        late: the graded version came after the deadline (and its grace).
        days_late: whole days after it, rounded up.
        penalty: the fraction of the points earned that lateness takes off; `score` is
            net of it (`raw_score` before it, `penalty_points` the difference).
        late_commits: commits after the deadline (graded or not); `newest_late` the newest
            one's committer time.
        hashes: ``{"files": {lab: sha256}, "checks": {lab: sha256}}`` of what graded each
            lab (`grader.grade.regrade`).
        reused: the labs taken from ``--previous`` rather than run.
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
    student_id: str = ""
    student_name: str = ""
    email: str = ""
    section: str = ""
    on_roster: bool | None = None
    missing: bool = False
    commit_date: str = ""
    submitted_at: str = ""
    late: bool = False
    days_late: int = 0
    penalty: float = 0.0
    late_commits: int = 0
    newest_late: str = ""
    hashes: dict[str, dict[str, str]] = field(default_factory=dict)
    reused: list[str] = field(default_factory=list)

    def note_in(self, lang: str) -> str:
        """`note` in `lang` ("zh" or "en")."""
        return self.note_zh if lang == "zh" and self.note_zh else self.note

    def error_in(self, lang: str) -> str:
        """`error` in `lang` ("zh" or "en")."""
        return self.error_zh if lang == "zh" and self.error_zh else self.error

    @property
    def raw_score(self) -> float:
        """The points of its labs, before any late penalty."""
        return sum(r.score for r in self.labs)

    @property
    def penalty_points(self) -> float:
        """The points the late penalty takes off (to the hundredth)."""
        return round(self.raw_score * self.penalty, 2)

    @property
    def score(self) -> float:
        """The grade: the points of its labs less the late penalty."""
        return round(self.raw_score - self.penalty_points, 2) if self.penalty else self.raw_score

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
        deadline: the ``--deadline`` as given ("" without one); `late_policy` its policy.
        previous: the ``--previous`` result file merged into this one ("" without one).
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
    deadline: str = ""
    late_policy: str = ""
    previous: str = ""

    @property
    def max_score(self) -> float:
        """The max score of one submission (every submission has the same)."""
        return max((s.max_score for s in self.submissions), default=0.0)
