"""The course checks itself: every stub is a TODO, every solution passes, and they agree.

Like rustlings' own check: each lab's student.py has only stubs (full docstring, a
``# TODO(labNN):`` line, ``raise NotImplementedError("labNN: implement <name>")``), the
reference solution defines the same functions with the same parameters, the stubs make every
test TODO, and the solution makes every test PASS.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from grader.labs import LabInfo, all_labs, load_lab
from grader.results import Status
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

LABS = all_labs()


def functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        n.name: n
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
    }


def signature(fn: ast.FunctionDef) -> list[tuple[str, str | None]]:
    args = fn.args
    defaults = [None] * (len(args.args) - len(args.defaults)) + [
        ast.unparse(d) for d in args.defaults
    ]
    return [(a.arg, d) for a, d in zip(args.args, defaults, strict=True)]


def test_there_are_labs() -> None:
    assert [i.id for i in LABS][:4] == ["lab01", "lab02", "lab03", "lab04"]


@pytest.mark.parametrize("info", LABS, ids=lambda i: i.id)
def test_stubs_are_stubs(info: LabInfo) -> None:
    source = info.student.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 150, "a student.py should fit in one sitting"
    stubs = functions(info.student)
    assert stubs, "no functions to implement"
    for name, fn in stubs.items():
        assert ast.get_docstring(fn), f"{name} has no docstring"
        body = ast.get_source_segment(source, fn) or ""
        assert f"# TODO({info.id}):" in body, f"{name} has no '# TODO({info.id}):' line"
        last = fn.body[-1]
        assert isinstance(last, ast.Raise), f"{name} does not end by raising"
        assert ast.unparse(last) == f"raise NotImplementedError('{info.id}: implement {name}')"


@pytest.mark.parametrize("info", LABS, ids=lambda i: i.id)
def test_solution_matches_the_stub_signatures(info: LabInfo) -> None:
    stubs, solution = functions(info.student), functions(info.solution)
    for name, fn in stubs.items():
        assert name in solution, f"the solution lacks {name}"
        assert signature(solution[name]) == signature(fn), f"{name}: signatures differ"


@pytest.mark.parametrize("info", LABS, ids=lambda i: i.id)
def test_stubs_todo_and_solution_passes(info: LabInfo, any_sandbox: Sandbox) -> None:
    lab = load_lab(info)
    stub = run_tests(lab, info.student, any_sandbox)
    assert {t.id: t.status for t in stub.tests} == {t.id: Status.TODO for t in lab.tests}
    solution = run_tests(lab, info.solution, any_sandbox)
    failing = [t.id for t in solution.tests if t.status is not Status.PASS]
    assert not failing, f"the reference solution fails {failing}"


@pytest.mark.parametrize("info", LABS, ids=lambda i: i.id)
def test_the_pristine_stub_is_the_handed_out_stub(info: LabInfo) -> None:
    """`minillm reset` restores `.stub.py`: it must be the student.py the course hands out."""
    stub = info.dir / ".stub.py"
    assert stub.is_file(), f"{info.id}: add .stub.py (a copy of the stub student.py)"
    assert stub.read_bytes() == info.student.read_bytes()
