"""Hidden checks: loaded only for grading, always hidden, and each catches a real bug.

`tests/fixtures/hidden_mutants/labNN/*.py` are wrong implementations in the mutant format
(`grader.mutants`) that pass every public check of their lab: each must fail exactly the
hidden tests its ``# fails:`` line names, and every hidden test must be failed by one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grade.checks import HiddenChecksError, hidden_path, load_graded_lab, load_hidden
from grader.labs import LabInfo, all_labs, load_lab
from grader.mutants import compose, parse_mutant
from grader.results import Status
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

ROOT = Path(__file__).resolve().parent.parent
HIDDEN_MUTANTS = ROOT / "tests" / "fixtures" / "hidden_mutants"
WITH_HIDDEN = [i for i in all_labs() if hidden_path(i).is_file()]


def test_two_labs_at_least_have_hidden_checks() -> None:
    assert {"lab04", "lab07"} <= {i.id for i in WITH_HIDDEN}


@pytest.mark.parametrize("info", WITH_HIDDEN, ids=lambda i: i.id)
def test_hidden_tests_come_after_the_public_ones_and_are_hidden(info: LabInfo) -> None:
    public = load_lab(info)
    graded = load_graded_lab(info)
    assert [s.id for s in graded.tests[: len(public.tests)]] == [s.id for s in public.tests]
    extra = graded.tests[len(public.tests) :]
    assert extra and all(s.hidden for s in extra)
    assert not any(s.hidden for s in public.tests)
    assert [s.id for s in load_graded_lab(info, hidden=False).tests] == [s.id for s in public.tests]


@pytest.mark.parametrize("info", WITH_HIDDEN, ids=lambda i: i.id)
def test_hidden_mutants_pass_every_public_check_and_fail_a_hidden_one(
    info: LabInfo, sandbox: Sandbox, tmp_path: Path
) -> None:
    lab = load_graded_lab(info)
    ids = [s.id for s in lab.tests]
    hidden = {s.id for s in lab.tests if s.hidden}
    caught: set[str] = set()
    paths = sorted((HIDDEN_MUTANTS / info.id).glob("*.py"))
    assert paths, f"{info.id}: add a wrong implementation that only the hidden checks catch"
    solution = info.solution.read_text(encoding="utf-8")
    for path in paths:
        mutant = parse_mutant(path, ids)
        student = tmp_path / f"{mutant.name}.py"
        student.write_text(compose(solution, mutant), encoding="utf-8")
        result = run_tests(lab, student, sandbox)
        failed = {t.id for t in result.tests if t.status is not Status.PASS}
        assert failed == set(mutant.fails), f"{path.name}: fails {sorted(failed)}"
        assert failed <= hidden, f"{path.name}: a public check catches it too"
        caught |= failed
    assert caught == hidden, f"no hidden mutant fails {sorted(hidden - caught)}"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_hidden_module_must_mark_its_tests_hidden(tmp_path: Path) -> None:
    lab = load_lab(all_labs()[0])
    n = len(lab.tests)
    module = write(
        tmp_path / "hidden.py",
        "def register(lab):\n"
        "    @lab.test('a', 'a')\n"
        "    def leaked(t):\n"
        "        t.check('x', True)\n",
    )
    with pytest.raises(HiddenChecksError, match=r"hidden\.py: adds leaked without hidden=True"):
        load_hidden(lab, module)
    assert len(lab.tests) == n


def test_a_hidden_module_without_register_or_broken_is_named(tmp_path: Path) -> None:
    lab = load_lab(all_labs()[0])
    with pytest.raises(HiddenChecksError, match=r"must define register\(lab\)"):
        load_hidden(lab, write(tmp_path / "a.py", "x = 1\n"))
    with pytest.raises(HiddenChecksError, match=r"b\.py: ZeroDivisionError"):
        load_hidden(lab, write(tmp_path / "b.py", "1 / 0\n"))
    with pytest.raises(HiddenChecksError, match="unknown 'nope'"):
        load_hidden(
            lab,
            write(
                tmp_path / "c.py",
                "def register(lab):\n"
                "    @lab.test('a', 'a', hidden=True, requires=['nope'])\n"
                "    def x(t):\n"
                "        pass\n",
            ),
        )
