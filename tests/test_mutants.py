"""The course tests itself: every wrong implementation in tests/mutants is caught.

Each file tests/mutants/labNN/<name>.py is a complete student.py with one realistic bug.
Its line ``# caught-by: test_a, test_b`` names the tests that must not PASS for it. And
every check of every lab must be failed by at least one mutant: a check that no wrong
implementation can fail is not a check.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from grader.labs import LabInfo, all_labs, load_lab
from grader.results import LabResult, Status
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

MUTANTS = Path(__file__).parent / "mutants"
_CAUGHT = re.compile(r"^# caught-by:\s*(.+)$", re.MULTILINE)


def _mutants() -> list[tuple[LabInfo, Path]]:
    out = []
    for info in all_labs():
        for path in sorted((MUTANTS / info.id).glob("*.py")):
            out.append((info, path))
    return out


def _caught_by(path: Path) -> list[str]:
    m = _CAUGHT.search(path.read_text(encoding="utf-8"))
    assert m, f"{path} needs a '# caught-by: test_id, ...' line"
    return [s.strip() for s in m.group(1).split(",") if s.strip()]


_results: dict[Path, LabResult] = {}


@cache
def _solution(lab_id: str) -> LabResult:
    info = next(i for i in all_labs() if i.id == lab_id)
    with Sandbox() as sb:
        return run_tests(load_lab(info), info.solution, sb)


def _run(info: LabInfo, path: Path, sandbox: Sandbox) -> LabResult:
    if path not in _results:
        _results[path] = run_tests(load_lab(info), path, sandbox)
    return _results[path]


@pytest.mark.parametrize(
    ("info", "path"), _mutants(), ids=[f"{i.id}-{p.stem}" for i, p in _mutants()]
)
def test_mutant_is_caught(info: LabInfo, path: Path, sandbox: Sandbox) -> None:
    result = _run(info, path, sandbox)
    status = {t.id: t.status for t in result.tests}
    assert not result.passed, f"{path.name} passes every {info.id} check"
    for test_id in _caught_by(path):
        assert test_id in status, f"{path.name}: unknown test id {test_id!r}"
        assert status[test_id] is not Status.PASS, f"{path.name} is not caught by {test_id}"
        assert status[test_id] is not Status.TODO, f"{path.name} is unfinished (TODO)"


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_labs_have_enough_mutants(info: LabInfo) -> None:
    assert len(list((MUTANTS / info.id).glob("*.py"))) >= 6, f"{info.id}: fewer than 6 mutants"


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_every_check_can_fail(info: LabInfo, sandbox: Sandbox) -> None:
    """Each check of the solution run is failed by some mutant.

    A mutant 'fails' a check when that check's line is not PASS, or when its test ended
    (exception, timeout, ...) while computing that check's input: the first check the
    solution has that the mutant's run never reached.
    """
    solution = _solution(info.id)
    assert solution.passed, f"{info.id}: the reference solution does not pass"
    covered: set[tuple[str, str]] = set()
    for lab_info, path in _mutants():
        if lab_info.id != info.id:
            continue
        result = _run(info, path, sandbox)
        for test in result.tests:
            names = [c.name.en for c in test.checks]
            for c in test.checks:
                if c.status is not Status.PASS:
                    covered.add((test.id, c.name.en))
            ref = next(t for t in solution.tests if t.id == test.id)
            ref_names = [c.name.en for c in ref.checks]
            passed = [n for n in names if n in ref_names]
            if test.status in (Status.ERROR, Status.TIMEOUT, Status.FAIL) and len(passed) < len(
                ref_names
            ):
                reached = {n for n in names}
                nxt = next((n for n in ref_names if n not in reached), None)
                if nxt is not None:
                    covered.add((test.id, nxt))
    missing = [
        f"[{t.id}] {c.name.en}"
        for t in solution.tests
        for c in t.checks
        if (t.id, c.name.en) not in covered
    ]
    assert not missing, "checks that no mutant fails:\n  " + "\n  ".join(missing)
