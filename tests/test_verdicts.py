"""Verdicts tell the truth about ordinary student code (labs 01–04, through the sandbox).

Each case is a realistic piece of student code and the verdict it must get: a wrong
return type is the student's FAIL (never an internal grader error), code that ignores
strides fails the view checks, and so on.
"""

from __future__ import annotations

from pathlib import Path

from grader.course.mutants import parse_mutant, run_mutant
from grader.labs import resolve_lab
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
    status = {t.id: t.status for t in result.tests}
    for test_id in ("chain_causal", "worked_example", "against_framework"):  # chain, example, MHA
        assert status[test_id] is Status.FAIL, test_id
    assert "grader" not in messages(result) and "staff" not in messages(result)
    assert "got str" in messages(result)


def test_the_three_view_blind_functions_fail(sandbox: Sandbox) -> None:
    for mutant in ("mask_flat_data", "softmax_reshape_data", "scores_q_flat"):
        result = run("lab04", mutant, sandbox)
        failed = {t.id: t.status for t in result.tests if t.status is not Status.PASS}
        assert failed == {"strided_views": Status.FAIL}, mutant


def _student(tmp_path: Path, lab: str, old: str, new: str) -> Path:
    info = resolve_lab(lab)
    source = info.solution.read_text(encoding="utf-8")
    assert old in source
    path = tmp_path / "student.py"
    path.write_text(source.replace(old, new), encoding="utf-8")
    return path


def test_not_implemented_from_a_library_is_an_error_not_todo(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    from grader.labs import load_lab
    from grader.runner import run_tests

    path = _student(
        tmp_path,
        "lab04",
        "    v = xt.numpy()\n",
        "    v = xt.numpy()\n    memoryview(v.reshape(-1, v.shape[-1]))[0]  # no sub-views\n",
    )
    result = run_tests(load_lab(resolve_lab("lab04")), path, sandbox)
    status = {t.id: t.status for t in result.tests}
    assert status["softmax_basic"] is Status.ERROR
    assert Status.TODO not in status.values()
    line = next(c for t in result.tests for c in t.checks if c.status is Status.ERROR)
    assert "NotImplementedError" in line.name.en and "student.py" in line.message.en  # type: ignore[union-attr]


def test_an_aliased_roundtrip_passes(tmp_path: Path, sandbox: Sandbox) -> None:
    from grader.labs import load_lab
    from grader.runner import run_tests

    path = _student(
        tmp_path,
        "lab02",
        '    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]\n'
        "    values = [decode_id(tok, i) for i in ids]\n",
        "    enc, dec = encode_byte, decode_id  # local aliases\n"
        '    ids = [enc(tok, b) for b in text.encode("utf-8")]\n'
        "    values = [dec(tok, i) for i in ids]\n",
    )
    result = run_tests(load_lab(resolve_lab("lab02")), path, sandbox)
    assert result.passed, [t.id for t in result.tests if t.status is not Status.PASS]
