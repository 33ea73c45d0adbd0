"""Wrong implementations the course was not built from: blame, hints and diagnoses hold.

``tests/fixtures/unseen/labNN/<bug>.py`` are written in the mutant format (the reference
solution plus one bug, a docstring, ``# zh:``, ``# fails:``, optional ``# blind:``) but are
not in the catalogue that ``make diagnoses`` builds from ``tests/mutants``: they stand for
students' own mistakes, written another way than the catalogued ones. On them:

- blame lands right: a core bug FAILs no metamorphic (views/arrays) test, a ``# blind:`` one
  fails one (every one of them, where the course asks >= 95%);
- a failed check in a test of several checks shows its own hint (>= 90%);
- at least half get a diagnosis at all (a catalogued bug their output looks like).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from grader.course.mutants import Mutant, failing_tests, parse_mutant, run_mutant
from grader.dsl import Lab
from grader.labs import LabInfo, all_labs, load_lab
from grader.results import LabResult, Status
from grader.sandbox.client import Sandbox
from grader.spec import hint_levels

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

UNSEEN = Path(__file__).parent / "fixtures" / "unseen"
CASES = [(info, p) for info in all_labs() for p in sorted((UNSEEN / info.id).glob("*.py"))]


@cache
def _lab(info: LabInfo) -> Lab:
    return load_lab(info)


_runs: dict[Path, tuple[Mutant, LabResult]] = {}


def _run(info: LabInfo, path: Path, sandbox: Sandbox) -> tuple[Mutant, LabResult]:
    if path not in _runs:
        mutant = parse_mutant(path, [s.id for s in _lab(info).tests])
        _runs[path] = (mutant, run_mutant(mutant, info, sandbox, _lab(info)))
    return _runs[path]


def test_there_are_unseen_implementations() -> None:
    assert len(CASES) >= 8
    assert {i.id for i, _ in CASES} >= {"lab04", "lab07"}


@pytest.mark.parametrize(("info", "path"), CASES, ids=[f"{i.id}-{p.stem}" for i, p in CASES])
def test_an_unseen_bug_fails_its_tests_and_blame_lands_right(
    info: LabInfo, path: Path, sandbox: Sandbox
) -> None:
    mutant, result = _run(info, path, sandbox)
    assert result.import_error is None
    assert failing_tests(result) == mutant.fails, f"{path.name}: fails {failing_tests(result)}"
    meta = {s.id for s in _lab(info).tests if s.metamorphic}
    hit = [
        t.id for t in result.tests if t.id in meta and t.status not in (Status.PASS, Status.SKIP)
    ]
    if mutant.blind is None:
        assert hit == [], f"{path.name} is a core bug, yet fails the input-kind tests {hit}"
    else:
        assert hit, f"{path.name} is blind to {mutant.blind}, yet fails no metamorphic test"


def _all(sandbox: Sandbox) -> list[tuple[LabInfo, Mutant, LabResult]]:
    return [(info, *_run(info, path, sandbox)) for info, path in CASES]


def test_failed_checks_of_unseen_bugs_show_their_own_hints(sandbox: Sandbox) -> None:
    own = total = 0
    for info, _, result in _all(sandbox):
        test_hint = {s.id: hint_levels(s.hint) for s in _lab(info).tests}
        for test in result.tests:
            failed = [c for c in test.checks if c.status is Status.FAIL]
            if len(failed) < 2:
                continue
            for c in failed:
                total += 1
                first = test_hint[test.id][0] if test_hint[test.id] else None
                own += bool(c.hints) and c.hints[0] != first
    assert total == 0 or own >= 0.9 * total, f"{own}/{total} failed checks show their own hint"


def test_at_least_half_of_the_unseen_bugs_get_a_diagnosis(sandbox: Sandbox) -> None:
    runs = _all(sandbox)
    named = [
        m.name
        for _, m, r in runs
        if any(c.diagnosis is not None for t in r.tests for c in t.checks)
    ]
    assert len(named) >= len(runs) / 2, f"diagnosed: {named} of {[m.name for _, m, _ in runs]}"
