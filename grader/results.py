"""What a verify run produced: check, test and lab results, and their JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from grader.i18n import Text

__all__ = ["CheckResult", "LabResult", "Status", "TestResult"]


class Status(StrEnum):
    """Outcome of a check or a test."""

    PASS = "PASS"
    FAIL = "FAIL"
    TODO = "TODO"
    ERROR = "ERROR"
    TIMEOUT = "TIMEOUT"
    SKIP = "SKIP"


@dataclass
class CheckResult:
    """One assertion line of the report."""

    name: Text
    status: Status
    message: Text | None = None
    output: str = ""  # what the student's code printed (as much as was kept)
    output_bytes: int = 0  # how much it printed in all
    hints: list[Text] = field(default_factory=list)  # from a nudge to the concrete next step


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
        """Counts of tests by status (the JSON `summary`)."""
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
