"""A lab's catalogue of known bugs (``labs/labNN/diagnoses.json``), and its use on a run.

The catalogue is data only: per check, the fingerprint of what each catalogued wrong
implementation (``tests/mutants/labNN/``) returned there, and each bug in its own words,
zh and en. ``python -m grader.course.diagnoses`` (``make diagnoses``) builds it by running
every mutant; the student edition ships the file, never the mutants.

`diagnose` runs in the grader after a lab's tests: a failed line whose fingerprint matches
a catalogued one gets that bug as its `Diagnosis`. When several bugs match a line, the one
that matches the most failed lines of the whole run wins (a missing transpose shows in
many checks; a bug that only shares one of them loses), then the one with the fewest
catalogued failures that this run does not show, then the catalogue's order.

Seeds: random inputs are fixed under `verify`, so every fingerprint applies. Under a run
seed (`minillm grade`, `verify --seed`), inputs drawn from `t.rng` differ per submission,
and so would every value computed from them: only the checks whose inputs are fixed
(marked not ``seeded``) are diagnosed then. Fingerprints for every seed would mean running
every mutant for every submission, in the grader, beside the student's code; the fixed-
input checks already cover most bugs (``grader.course.diagnoses`` prints how many).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.diagnose.evidence import matches, message_fingerprint
from grader.i18n import Text
from grader.results import CheckResult, Diagnosis, LabResult, Status, TestResult

__all__ = ["FILENAME", "SCHEMA", "Catalogue", "CatalogueError", "check_keys", "diagnose"]

FILENAME = "diagnoses.json"
SCHEMA = 1
_DIAGNOSED = (Status.FAIL, Status.ERROR)


class CatalogueError(ValueError):
    """A diagnoses file that cannot be used (the message names the file and the problem)."""


def check_keys(test: TestResult) -> Iterator[tuple[str, CheckResult]]:
    """Each line of a test with its key: its English name, and ``#n`` for the n-th repeat."""
    seen: Counter[str] = Counter()
    for c in test.checks:
        n = seen[c.name.en]
        seen[c.name.en] += 1
        yield (c.name.en if n == 0 else f"{c.name.en}#{n}"), c


def _line_evidence(c: CheckResult) -> dict[str, Any] | None:
    """A failed line's fingerprint: the value its check saw, else its message."""
    if c.status not in _DIAGNOSED:
        return None
    if c.evidence is not None:
        return c.evidence
    if c.message is None:
        return None
    return message_fingerprint(c.message.en)


@dataclass
class Catalogue:
    """Known bugs (`bugs`: id → its words) and, per test id and check key, the
    fingerprints of the bugs that fail that check (in the catalogue's order)."""

    lab: str
    bugs: dict[str, Text] = field(default_factory=dict)
    checks: dict[str, dict[str, list[tuple[str, dict[str, Any]]]]] = field(default_factory=dict)

    # -- building -----------------------------------------------------------------------
    def add_run(self, bug: str, text: Text, result: LabResult) -> int:
        """Add a bug and the fingerprints of the lines its run failed; returns how many."""
        self.bugs[bug] = text
        added = 0
        for test in result.tests:
            for key, c in check_keys(test):
                fp = _line_evidence(c)
                if fp is not None:
                    self.checks.setdefault(test.id, {}).setdefault(key, []).append((bug, fp))
                    added += 1
        return added

    def to_json(self) -> str:
        doc = {
            "schema": SCHEMA,
            "lab": self.lab,
            "bugs": {b: {"zh": t.zh, "en": t.en} for b, t in self.bugs.items()},
            "checks": {
                tid: {key: [[b, fp] for b, fp in entries] for key, entries in keys.items()}
                for tid, keys in self.checks.items()
            },
        }
        return json.dumps(doc, ensure_ascii=False, sort_keys=False, separators=(",", ":")) + "\n"

    # -- reading ------------------------------------------------------------------------
    @classmethod
    def load(cls, path: Path) -> Catalogue:
        """Read a diagnoses file.

        Raises:
            CatalogueError: not JSON, another schema, or entries of the wrong shape.
        """
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise CatalogueError(f"{path}: not a readable JSON file ({e})") from None
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise CatalogueError(f"{path}: expected schema {SCHEMA}; rebuild: make diagnoses")
        try:
            bugs = {b: Text(str(t["zh"]), str(t["en"])) for b, t in doc["bugs"].items()}
            checks = {
                str(tid): {
                    str(key): [(str(b), dict(fp)) for b, fp in entries if b in bugs]
                    for key, entries in keys.items()
                }
                for tid, keys in doc["checks"].items()
            }
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise CatalogueError(
                f"{path}: malformed entry ({e!r}); rebuild: make diagnoses"
            ) from None
        return cls(str(doc.get("lab", "")), bugs, checks)

    def candidates(
        self, test_id: str, key: str, seen: dict[str, Any], seeded_ok: bool
    ) -> list[str]:
        """The bugs whose fingerprint at this check matches `seen`, in catalogue order."""
        if seen.get("seeded") and not seeded_ok:
            return []
        entries = self.checks.get(test_id, {}).get(key, [])
        return [b for b, fp in entries if (seeded_ok or not fp.get("seeded")) and matches(seen, fp)]


def diagnose(result: LabResult, catalogue: Catalogue | None, *, fixed_seeds: bool) -> int:
    """Give each failed line of `result` the known bug it matches; returns how many got one.

    A bug is ruled out when this run PASSes a check that the bug fails (with fixed inputs,
    or any input under `fixed_seeds`): a student whose code returns None where a known bug
    does, but who passes the bug's other failures, has another bug. `fixed_seeds` is False
    under a run seed: then only checks with fixed inputs count.
    """
    if catalogue is None:
        return 0
    found: list[tuple[CheckResult, list[str]]] = []
    passed: set[tuple[str, str]] = set()
    for test in result.tests:
        for key, c in check_keys(test):
            if c.status is Status.PASS:
                passed.add((test.id, key))
            seen = _line_evidence(c)
            if seen is None:
                continue
            bugs = catalogue.candidates(test.id, key, seen, fixed_seeds)
            if bugs:
                found.append((c, bugs))
    ruled_out = {
        b
        for tid, keys in catalogue.checks.items()
        for key, entries in keys.items()
        if (tid, key) in passed
        for b, fp in entries
        if fixed_seeds or not fp.get("seeded")
    }
    found = [(c, [b for b in bugs if b not in ruled_out]) for c, bugs in found]
    found = [(c, bugs) for c, bugs in found if bugs]
    votes = Counter(b for _, bugs in found for b in bugs)
    size = Counter(b for keys in catalogue.checks.values() for v in keys.values() for b, _ in v)
    order = {b: i for i, b in enumerate(catalogue.bugs)}
    for c, bugs in found:  # most lines matched, then fewest of its lines not seen here
        best = min(bugs, key=lambda b: (-votes[b], size[b] - votes[b], order.get(b, len(order))))
        c.diagnosis = Diagnosis(best, catalogue.bugs[best])
    return len(found)


def load_for(lab_dir: Path) -> Catalogue | None:
    """The lab folder's catalogue, or None when it has none (or an unusable one: a
    diagnosis is a help, never a reason for a run to fail)."""
    path = lab_dir / FILENAME
    if not path.is_file():
        return None
    try:
        return Catalogue.load(path)
    except CatalogueError:
        return None


def counts(results: Iterable[LabResult]) -> Counter[tuple[str, str]]:
    """How many runs have each (lab, bug) diagnosed at least once (for the class report)."""
    seen: Counter[tuple[str, str]] = Counter()
    for r in results:
        bugs = {c.diagnosis.bug for t in r.tests for c in t.checks if c.diagnosis is not None}
        seen.update((r.lab, b) for b in bugs)
    return seen
