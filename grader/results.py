"""What a verify run produced: check, test and lab results, and their JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

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
    output: str = ""


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


@dataclass
class LabResult:
    """A whole verify run of one lab against one implementation."""

    lab: str
    title: Text
    impl: str
    seconds: float
    tests: list[TestResult]
    import_error: Text | None = None

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

    def to_json(self, lang: str) -> dict[str, Any]:
        """The documented JSON result, with texts in `lang`."""
        tests = []
        for t in self.tests:
            checks = [
                {
                    "name": c.name.pick(lang),
                    "status": c.status.value,
                    "message": c.message.pick(lang) if c.message else "",
                }
                for c in t.checks
            ]
            entry: dict[str, Any] = {
                "id": t.id,
                "title": t.title.pick(lang),
                "status": t.status.value,
                "checks": checks,
            }
            if t.reason is not None:
                entry["reason"] = t.reason.pick(lang)
            tests.append(entry)
        doc: dict[str, Any] = {
            "lab": self.lab,
            "title": self.title.pick(lang),
            "impl": self.impl,
            "duration_s": round(self.seconds, 4),
            "summary": self.summary(),
            "tests": tests,
        }
        if self.import_error is not None:
            doc["import_error"] = self.import_error.pick(lang)
        return doc
