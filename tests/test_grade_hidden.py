"""Hidden checks: loaded only for grading, always hidden, and each catches a real bug.

`tests/fixtures/hidden_mutants/labNN/*.py` are wrong implementations in the mutant format
(`grader.course.mutants`) that pass every public check of their lab: each must fail exactly the
hidden tests its ``# fails:`` line names, and every hidden test must be failed by one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course.mutants import compose, parse_mutant
from grader.course.selfcheck import run_self_check
from grader.grade.bundle import BundleError, build_bundle
from grader.grade.checks import (
    HiddenChecksError,
    check_hidden,
    hidden_path,
    load_graded_lab,
    load_hidden,
)
from grader.labs import LabInfo, all_labs, load_lab
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
    with pytest.raises(HiddenChecksError, match=r"hidden\.py:2: adds leaked without hidden=True"):
        load_hidden(lab, module)
    assert len(lab.tests) == n


def test_a_hidden_module_without_register_or_broken_is_named(tmp_path: Path) -> None:
    lab = load_lab(all_labs()[0])
    with pytest.raises(HiddenChecksError, match=r"must define register\(lab\)"):
        load_hidden(lab, write(tmp_path / "a.py", "x = 1\n"))
    with pytest.raises(HiddenChecksError, match=r"b\.py:1: ZeroDivisionError"):
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


UNKNOWN_REQUIRES = (
    '"""A hidden module whose test requires a test that does not exist."""\n'
    "\n"
    "\n"
    "def register(lab):\n"
    "    @lab.test(\n"
    "        'a',\n"
    "        'a',\n"
    "        hidden=True,\n"
    "        requires=['no_such_test'],\n"
    "    )\n"
    "    def extra(t):\n"
    "        pass\n"
)
MISSING_IMPORT = (
    '"""A hidden module that imports what is not there."""\n'
    "\n"
    "from framework import no_such_function\n"
    "\n"
    "\n"
    "def register(lab):\n"
    "    pass\n"
)


@pytest.mark.parametrize(
    ("source", "line", "what"),
    [
        (UNKNOWN_REQUIRES, 5, "requires unknown 'no_such_test'"),
        (MISSING_IMPORT, 3, "ImportError: cannot import name 'no_such_function'"),
        ("def register(lab):\n    return (\n", 2, "SyntaxError: "),
        (
            "def register(lab):\n    @lab.test('a', 'a')\n    def leak(t):\n        pass\n",
            2,
            "adds leak without hidden=True",
        ),
    ],
)
def test_a_broken_hidden_module_is_one_line_with_its_file_and_line(
    tmp_path: Path, source: str, line: int, what: str
) -> None:
    lab = load_lab(all_labs()[0])
    n = len(lab.tests)
    path = write(tmp_path / "hidden.py", source)
    with pytest.raises(HiddenChecksError) as info:
        load_hidden(lab, path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ") and what in message, message
    assert "\n" not in message and "Traceback" not in message
    assert len(lab.tests) == n  # nothing half-registered stays


def broken_course(tmp_path: Path, source: str, lab: str = "lab04") -> Path:
    """A copy of one lab of the course (with its hidden checks), its hidden.py replaced."""
    course = tmp_path / "course"
    for part in ("labs", "solutions"):
        shutil.copytree(ROOT / part / lab, course / part / lab)
    write(course / "solutions" / lab / "hidden.py", source)
    return course


def test_check_hidden_names_each_broken_module(tmp_path: Path) -> None:
    course = broken_course(tmp_path, MISSING_IMPORT)
    hidden = course / "solutions" / "lab04" / "hidden.py"
    assert check_hidden(course, ["lab04"]) == [
        f"{hidden}:3: ImportError: cannot import name 'no_such_function' from 'framework' "
        f"({ROOT / 'framework' / '__init__.py'})"
    ]
    write(hidden, (ROOT / "solutions" / "lab04" / "hidden.py").read_text(encoding="utf-8"))
    assert check_hidden(course, ["lab04"]) == []
    assert check_hidden(ROOT, [i.id for i in all_labs()]) == []


def run_cli(course: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        cwd=course,
        env={**os.environ, "MINILLM_ROOT": str(course), "NO_COLOR": "1"},
        timeout=300,
    )


def test_self_check_and_the_bundle_refuse_a_broken_hidden_module(tmp_path: Path) -> None:
    course = broken_course(tmp_path, UNKNOWN_REQUIRES)
    where = "solutions/lab04/hidden.py:5: ValueError: lab04: test 'extra' requires unknown"
    proc = run_cli(course, "self-check", "lab04", "--only", "solution")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(where) and "Traceback" not in proc.stderr
    out = tmp_path / "bundle.zip"
    proc = run_cli(course, "gradescope-bundle", str(out), "--labs", "lab04")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(where) and "Traceback" not in proc.stderr
    assert "not built" in proc.stderr and not out.exists()


def test_build_bundle_refuses_a_broken_hidden_module(tmp_path: Path) -> None:
    course = broken_course(tmp_path, MISSING_IMPORT)
    out = tmp_path / "b.zip"
    with pytest.raises(BundleError, match=r"hidden\.py:3: ImportError"):
        build_bundle(course, out, [LabInfo("lab04", course / "labs" / "lab04")], only_labs=True)
    assert not out.exists()


def test_self_check_reports_a_broken_hidden_module_as_a_finding(tmp_path: Path) -> None:
    course = broken_course(tmp_path, MISSING_IMPORT)
    info = LabInfo("lab04", course / "labs" / "lab04")
    found = run_self_check([info], checks={"solution", "mutants"})
    assert [(f.check, f.problem.split(": ", 1)[0]) for f in found] == [
        ("solution", f"{course / 'solutions' / 'lab04' / 'hidden.py'}:3")
    ]
