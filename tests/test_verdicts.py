"""Verdicts tell the truth about ordinary student code (labs 01–04, through the sandbox).

Each case is a realistic piece of student code and the verdict it must get: a wrong
return type is the student's FAIL (never an internal grader error), code that ignores
strides fails the view checks, and so on.
"""

from __future__ import annotations

from pathlib import Path

from grader.labs import resolve_lab
from grader.mutants import parse_mutant, run_mutant
from grader.results import LabResult, Status
from grader.sandbox.client import Sandbox

MUTANTS = Path(__file__).parent / "mutants"


def run(lab: str, mutant: str, sandbox: Sandbox) -> LabResult:
    info = resolve_lab(lab)
    return run_mutant(parse_mutant(MUTANTS / lab / f"{mutant}.py"), info, sandbox)


def messages(result: LabResult) -> str:
    return "\n".join(c.message.en for t in result.tests for c in t.checks if c.message)


def test_softmax_returning_a_string_fails_without_a_grader_error(sandbox: Sandbox) -> None:
    result = run("lab04", "softmax_returns_str", sandbox)
    status = {t.number: t.status for t in result.tests}
    assert status[9] is status[10] is status[11] is Status.FAIL  # chain, worked example, MHA
    assert "grader" not in messages(result) and "staff" not in messages(result)
    assert "got str" in messages(result)


def test_the_three_view_blind_functions_fail(sandbox: Sandbox) -> None:
    for mutant in ("mask_flat_data", "softmax_reshape_data", "scores_q_flat"):
        result = run("lab04", mutant, sandbox)
        failed = {t.id: t.status for t in result.tests if t.status is not Status.PASS}
        assert failed == {"strided_views": Status.FAIL}, mutant
