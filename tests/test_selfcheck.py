"""`minillm self-check`: the course passes it, and it finds each kind of problem."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from grader.course.mutants import compose, parse_mutant
from grader.course.selfcheck import Finding, run_self_check, stub_problems, text_problems
from grader.i18n import Text
from grader.labs import LabInfo, all_labs
from grader.results import CheckResult, LabResult, Status, TestResult

ROOT = Path(__file__).resolve().parent.parent


def test_every_lab_passes_the_cheap_checks() -> None:
    """The runs of every stub and solution are test_curriculum's, handouts and mutants have
    their own tests: here every lab's static checks, and the runs of the labs with hidden
    checks (whose hidden tests test_curriculum does not run)."""
    found = run_self_check(all_labs(), checks={"one-source", "docstrings"})
    unmarked = [f for f in found if "no '# BEGIN SOLUTION' markers" in f.problem]
    assert [f for f in found if f not in unmarked] == []
    if unmarked:  # a lab on its way in: `minillm stubs` says how to mark it
        warnings.warn(f"not one source yet: {', '.join(f.lab for f in unmarked)}", stacklevel=1)
    hidden = [i for i in all_labs() if i.id in ("lab04", "lab07")]
    assert run_self_check(hidden, checks={"stubs", "solution", "texts"}) == []


def test_verify_all_runs_every_lab() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "verify", "--all", "--lang", "en"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    labs = all_labs()
    assert proc.returncode == 1  # the stubs: every lab short of PASS
    assert proc.stdout.count("— verify\n") == len(labs)
    assert proc.stdout.rstrip().endswith(f"All labs: 0/{len(labs)} passed every test")


def copy_lab(tmp_path: Path, lab: str = "lab04") -> LabInfo:
    for part in ("labs", "solutions"):
        shutil.copytree(ROOT / part / lab, tmp_path / part / lab)
    return LabInfo(lab, tmp_path / "labs" / lab)


def test_a_stub_that_is_not_a_stub_is_found(tmp_path: Path) -> None:
    info = copy_lab(tmp_path)
    shutil.copyfile(info.solution, info.student)
    found = run_self_check([info], checks={"one-source", "stubs", "docstrings"})
    kinds = {f.check for f in found}
    assert kinds == {"one-source", "stubs", "docstrings"}, found
    assert Finding("stubs", "lab04", "the stub: scores_identity is PASS, not TODO") in found
    assert any("softmax() has no '# TODO(lab04):' line" in f.problem for f in found)


def test_a_solution_with_a_bug_or_without_markers_is_found(tmp_path: Path) -> None:
    info = copy_lab(tmp_path)
    mutant = parse_mutant(ROOT / "tests/fixtures/hidden_mutants/lab04/mask_numpy_checks_shape.py")
    info.solution.write_text(compose(info.solution.read_text(encoding="utf-8"), mutant), "utf-8")
    found = run_self_check([info], checks={"solution"})
    assert found == [Finding("solution", "lab04", "the solution: mask_no_broadcast is FAIL")]
    info.solution.write_text("def softmax(x):\n    return x\n", encoding="utf-8")
    found = run_self_check([info], checks={"one-source"})
    assert [f.problem for f in found] == [
        "the solution has no '# BEGIN SOLUTION' markers (not one source)"
    ]


def test_stub_problems_names_what_a_function_lacks(tmp_path: Path) -> None:
    info = copy_lab(tmp_path)
    info.student.write_text(
        'def a():\n    """Doc."""\n    # TODO(lab04): do it.\n'
        '    raise NotImplementedError("lab04: implement a")\n'
        "\n\ndef b():\n    return 1\n",
        encoding="utf-8",
    )
    assert stub_problems(info) == [
        "b() has no docstring",
        "b() has no '# TODO(lab04):' line",
        "b() does not end with raise NotImplementedError('lab04: implement b')",
    ]


def result_with(*texts: Text) -> LabResult:
    checks = [CheckResult(t, Status.FAIL, t) for t in texts]
    test = TestResult("t", 1, Text("测试", "test"), Status.FAIL, checks)
    return LabResult("lab04", Text("实验", "lab"), "s.py", 0.0, [test])


def test_text_problems_finds_a_missing_or_wrong_language() -> None:
    good = result_with(
        Text("形状为 [2, 2]", "shape is [2, 2]"),
        Text("I @ Iᵀ = I", "I @ Iᵀ = I"),
        Text("roundtrip(tok, '你')", "roundtrip(tok, '你')"),  # quoted data may be Chinese
        # a model's reply, cut short or holding a quote: its quote runs to the end of the line
        Text("期望 'Hi.'\n实际 'A数 can't 变", "expected 'Hi.'\ngot      'A数 can't 变"),
    )
    assert text_problems([good]) == []
    bad = result_with(
        Text("", "empty Chinese side"),
        Text("形状", "形状 is wrong"),
        Text("the shape is wrong", "the shape is wrong here"),
        Text("形状 'x' 不对", "形状 'x' is wrong"),  # ours, before the quote: the wrong language
    )
    problems = text_problems([bad])
    assert len(problems) == 4, problems  # one each: a repeated text is reported once
    assert any("an empty side" in p for p in problems)
    assert any("Chinese in the English text" in p for p in problems)
    assert any("English in the Chinese text" in p for p in problems)


def test_the_command(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grader", "self-check", *args],
            capture_output=True,
            text=True,
            timeout=600,
        )

    proc = run("lab04", "--only", "docstrings,one-source,stubs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "lab04: ok" in proc.stdout and "no problem found" in proc.stdout
    proc = run("--only", "nonsense")
    assert proc.returncode == 2 and "unknown check" in proc.stderr


@pytest.mark.parametrize("args", [["lab04", "--all"], []])
def test_verify_takes_a_lab_or_all(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "verify", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "--all" in proc.stderr
