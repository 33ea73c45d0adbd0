"""Unusual but correct implementations pass every check of their lab.

A check must fail for wrong code (tests/mutants) and must not fail for right code written
another way: another algorithm, numpy instead of lists, a tuple or an ndarray returned
where a list is expected, numpy integers, a regex. Each file
tests/fixtures/variants/labNN/<name>.py is a complete student.py that must PASS everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.labs import LabInfo, all_labs, load_lab
from grader.results import Status
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

VARIANTS = Path(__file__).parent / "fixtures" / "variants"
CASES = [(info, p) for info in all_labs() for p in sorted((VARIANTS / info.id).glob("*.py"))]


def test_there_are_variants() -> None:
    assert {info.id for info, _ in CASES} >= {"lab09", "lab12"}


@pytest.mark.parametrize(("info", "path"), CASES, ids=[f"{i.id}-{p.stem}" for i, p in CASES])
def test_a_correct_variant_passes(info: LabInfo, path: Path, sandbox: Sandbox) -> None:
    result = run_tests(load_lab(info), path, sandbox)
    failing = {
        t.id: [c.name.en for c in t.checks if c.status is not Status.PASS] or t.status.name
        for t in result.tests
        if t.status is not Status.PASS
    }
    assert not failing, f"{path.name} is correct but fails {failing}"
    diagnosed = [c.name.en for t in result.tests for c in t.checks if c.diagnosis is not None]
    assert diagnosed == [], f"{path.name} is correct but is told of a known bug at {diagnosed}"
