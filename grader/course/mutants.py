"""Mutants: realistic wrong implementations that a lab's checks must catch.

A mutant is a file ``tests/mutants/labNN/<bug>.py`` with three parts: a module docstring
that names its one bug, a line ``# fails: test_a, test_b`` that lists EXACTLY the tests
that do not PASS for it (its own tests and those that require them), and only the
function(s) that carry the bug, written as overrides of the lab's reference solution:

    \"\"\"Mutant: softmax without subtracting the max (overflows on large logits).\"\"\"

    # fails: softmax_stable

    import numpy as np
    from framework import Tensor, as_tensor, tensor_from


    def softmax(x: Tensor) -> Tensor:
        ...

The program that runs is the solution's source followed by the mutant's (its
``from __future__`` lines dropped, since they may only open a file), written as
``student.py`` in a temporary folder. Later definitions win, so the mutant differs from
the solution in the overridden functions alone and cannot drift into a second, accidental
bug when the solution changes. What this module does not do: judge whether a bug is
realistic, or decide which tests a mutant should fail; the lab author declares that.

Lab authors keep the ``# fails:`` lines true with

    python -m grader.course.mutants lab04              # observed next to declared, per mutant
    python -m grader.course.mutants lab04 softmax_x    # only some mutants
    python -m grader.course.mutants lab04 --update     # rewrite the lines to the observed sets

The idea is mutation testing (a test suite is judged by the wrong programs it rejects),
with hand-written mutants as in rustlings' and check50's self-checks.
"""

from __future__ import annotations

import ast
import re
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from grader.dsl import Lab
from grader.errors import GraderError
from grader.labs import LabInfo, UnknownLab, load_lab, resolve_lab
from grader.results import LabResult, Status
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

__all__ = [
    "BLIND_KINDS",
    "Mutant",
    "MutantError",
    "as_student",
    "built",
    "check_lab",
    "compose",
    "failing_tests",
    "load_mutants",
    "main",
    "mutant_paths",
    "mutants_dir",
    "parse_mutant",
    "run_mutant",
    "write_fails",
]

_FAILS = re.compile(r"^#\s*fails:(?P<ids>.*)$", re.MULTILINE)
_ZH = re.compile(r"^#\s*zh:(?P<text>.*)$", re.MULTILINE)
_BLIND = re.compile(r"^#\s*blind:(?P<kind>.*)$", re.MULTILINE)
BLIND_KINDS = ("views", "arrays")
_PREFIX = "Mutant:"
_USAGE = """usage: python -m grader.course.mutants LAB [NAME ...] [--update]

Run the lab's mutants (or those NAMEd) and print, for each, the tests that do not PASS
next to its declared '# fails:' set. --update rewrites differing '# fails:' lines.
Exit status: 0 all match (or were updated), 1 some differ, 2 a broken mutant or usage."""
SEPARATOR = "# ---- mutant {name}: the definitions below replace the solution's ----"


class MutantError(GraderError, ValueError):
    """A mutant file that does not follow the format (the message names the file)."""


@dataclass(frozen=True)
class Mutant:
    """One parsed mutant file.

    Attributes:
        path: the file, ``tests/mutants/labNN/<name>.py``.
        bug: its docstring without the ``Mutant:`` prefix: the one bug it carries.
        fails: the declared ids of the tests that must not PASS, in file order.
        source: the file's text.
        bug_zh: its ``# zh:`` line: the same bug in Chinese ("" when the file has none).
        blind: its ``# blind:`` line, "views" or "arrays", for a bug that ignores an input
            kind (strides, ndarrays): it must fail a metamorphic test, and only a mutant
            with this line may fail one.
    """

    path: Path
    bug: str
    fails: tuple[str, ...]
    source: str
    bug_zh: str = ""
    blind: str | None = None

    @property
    def name(self) -> str:
        """The file's stem, which names the bug: ``no_max_subtraction``."""
        return self.path.stem


def mutants_dir(info: LabInfo) -> Path:
    """``tests/mutants/<lab id>`` of the course that holds the lab."""
    return info.dir.parent.parent / "tests" / "mutants" / info.id


def mutant_paths(info: LabInfo) -> list[Path]:
    """The lab's mutant files, sorted by name (none if the folder does not exist)."""
    return sorted(mutants_dir(info).glob("*.py"))


def parse_mutant(
    path: Path, test_ids: Collection[str] | None = None, *, require_fails: bool = True
) -> Mutant:
    """Read a mutant file and check its docstring and ``# fails:`` line.

    Args:
        path: the mutant file.
        test_ids: the lab's test ids; when given, every declared id must be one of them.
        require_fails: False accepts a missing or empty ``# fails:`` line (as no ids),
            for ``--update`` to fill in.

    Returns:
        The parsed `Mutant`.

    Raises:
        MutantError: on a syntax error, a missing docstring, a missing, repeated or empty
            ``# fails:`` line, a repeated id, or (with `test_ids`) an unknown id. The
            message names the file and, for an unknown id, lists the lab's ids.
    """
    source = path.read_text(encoding="utf-8")
    tree = _parse(source, path)
    doc = ast.get_docstring(tree)
    if not doc or not doc.strip():
        raise MutantError(f'{path}: needs a docstring naming its one bug: """Mutant: ..."""')
    bug = doc.strip().removeprefix(_PREFIX).strip()
    lines = _FAILS.findall(source)
    if len(lines) > 1 or (require_fails and not lines):
        found = "none" if not lines else f"{len(lines)}"
        raise MutantError(f"{path}: needs exactly one '# fails: test_id, ...' line, found {found}")
    fails = tuple(s.strip() for s in (lines or [""])[0].split(",") if s.strip())
    if not fails and require_fails:
        raise MutantError(f"{path}: '# fails:' lists no test; a mutant must fail at least one")
    repeated = sorted({f for f in fails if fails.count(f) > 1})
    if repeated:
        raise MutantError(f"{path}: '# fails:' lists {', '.join(repeated)} more than once")
    if test_ids is not None:
        unknown = [f for f in fails if f not in test_ids]
        if unknown:
            raise MutantError(
                f"{path}: '# fails:' names unknown test id(s) {', '.join(unknown)}; "
                f"the lab's tests are: {', '.join(test_ids)}"
            )
    zh = [z.strip() for z in _ZH.findall(source)]
    if len(zh) > 1:
        raise MutantError(f"{path}: has {len(zh)} '# zh:' lines; one says the bug in Chinese")
    blind = [b.strip() for b in _BLIND.findall(source)]
    if len(blind) > 1 or (blind and blind[0] not in BLIND_KINDS):
        raise MutantError(
            f"{path}: '# blind:' must appear at most once, as one of {', '.join(BLIND_KINDS)}; "
            f"found {', '.join(blind)}"
        )
    return Mutant(path, bug, fails, source, zh[0] if zh else "", blind[0] if blind else None)


def load_mutants(info: LabInfo, lab: Lab | None = None) -> list[Mutant]:
    """Every mutant of a lab, parsed and checked against the lab's test ids."""
    ids = [spec.id for spec in (lab or load_lab(info)).tests]
    return [parse_mutant(p, ids) for p in mutant_paths(info)]


def compose(solution_source: str, mutant: Mutant) -> str:
    """The program a mutant runs as: the solution, a separator, then the mutant's overrides.

    Raises:
        MutantError: when the mutant defines no top-level function or class that the
            solution defines (it would override nothing, so it is not the solution plus
            one bug).
    """
    mine = _top_level_names(_parse(mutant.source, mutant.path))
    theirs = _top_level_names(_parse(solution_source, Path("solution")))
    if not mine & theirs:
        defined = ", ".join(sorted(mine)) or "nothing"
        raise MutantError(
            f"{mutant.path}: overrides no function of the solution (it defines {defined}; "
            f"the solution defines {', '.join(sorted(theirs))})"
        )
    return "\n".join(
        [
            solution_source.rstrip("\n"),
            "",
            "",
            SEPARATOR.format(name=mutant.name),
            _drop_future_imports(mutant.source, mutant.path).strip("\n"),
            "",
        ]
    )


@contextmanager
def built(mutant: Mutant, info: LabInfo) -> Iterator[Path]:
    """The mutant's program as ``student.py`` in a temporary folder, removed afterwards."""
    program = compose(info.solution.read_text(encoding="utf-8"), mutant)
    with tempfile.TemporaryDirectory(prefix=f"minillm-mutant-{mutant.name}-") as folder:
        student = Path(folder) / "student.py"
        student.write_text(program, encoding="utf-8")
        yield student


@contextmanager
def as_student(impl: Path, info: LabInfo) -> Iterator[Path]:
    """The file to run as the student's code for `impl`.

    A mutant of the lab (a file in its mutants folder) is built with `built`; any other
    file is used as it is. For tools that take an implementation path, such as a
    handout's quoted report of a wrong implementation.
    """
    if impl.resolve().parent != mutants_dir(info).resolve():
        yield impl
        return
    with built(parse_mutant(impl), info) as student:
        yield student


def run_mutant(
    mutant: Mutant, info: LabInfo, sandbox: Sandbox, lab: Lab | None = None
) -> LabResult:
    """Run the lab's tests against the mutant (see `built`)."""
    with built(mutant, info) as student:
        result = run_tests(lab or load_lab(info), student, sandbox)
    result.impl = str(mutant.path)  # the file a reader can open, not the removed program
    return result


def failing_tests(result: LabResult) -> tuple[str, ...]:
    """The ids of the tests that did not PASS, in the lab's order."""
    return tuple(t.id for t in result.tests if t.status is not Status.PASS)


def write_fails(path: Path, fails: Sequence[str]) -> None:
    """Rewrite the ``# fails:`` line of a mutant file (or add one after its docstring)."""
    source = path.read_text(encoding="utf-8")
    line = f"# fails: {', '.join(fails)}"
    if _FAILS.search(source):
        source = _FAILS.sub(line, source, count=1)
    else:
        tree = _parse(source, path)
        first = tree.body[0] if tree.body else None
        if first is None or ast.get_docstring(tree) is None or first.end_lineno is None:
            raise MutantError(f"{path}: needs a docstring before the '# fails:' line can be added")
        rows = source.splitlines(keepends=True)
        rows[first.end_lineno : first.end_lineno] = ["\n", line + "\n"]
        source = "".join(rows)
    path.write_text(source, encoding="utf-8")


def _parse(source: str, path: Path) -> ast.Module:
    try:
        return ast.parse(source, filename=str(path))
    except SyntaxError as e:
        where = f"{path}:{e.lineno}" if e.lineno else f"{path}"
        raise MutantError(f"{where}: syntax error: {e.msg}") from None


def _top_level_names(tree: ast.Module) -> set[str]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for node in tree.body if isinstance(node, kinds)}


def _drop_future_imports(source: str, path: Path) -> str:
    """The source without its ``from __future__ import ...`` statements."""
    drop: set[int] = set()
    for node in _parse(source, path).body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            drop.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    rows = source.splitlines(keepends=True)
    return "".join(row for n, row in enumerate(rows, 1) if n not in drop)


# -- command line -------------------------------------------------------------------------


def _report(mutant: Mutant, result: LabResult, ids: Sequence[str]) -> tuple[str, list[str]]:
    """``ok``, ``diff`` or ``broken`` (cannot serve as a mutant), and the lines that say why."""
    observed = failing_tests(result)
    declared = tuple(i for i in ids if i in mutant.fails)
    todo = [t.id for t in result.tests if t.status is Status.TODO]
    verdict = "ok" if set(observed) == set(mutant.fails) else "diff"
    notes: list[str] = []
    if verdict == "diff":
        extra = [i for i in observed if i not in mutant.fails]
        missing = [i for i in declared if i not in observed]
        unknown = [f for f in mutant.fails if f not in ids]
        notes.append(f"declared: {', '.join(declared) or '(none)'}")
        if extra:
            notes.append(f"+ fails, not declared: {', '.join(extra)}")
        if missing:
            notes.append(f"- declared, but passes: {', '.join(missing)}")
        if unknown:
            notes.append(f"? not a test of this lab: {', '.join(unknown)}")
    if not observed:
        verdict = "broken"
        notes.append("! passes every test: the checks do not see this bug")
    if todo:
        verdict = "broken"
        notes.append(f"! TODO (raises the stub's error): {', '.join(todo)}")
    if result.import_error is not None:
        verdict = "broken"
        rows = result.import_error.en.strip().splitlines()
        notes.append(f"! cannot import: {rows[-1] if rows else ''}")
    head = {"ok": "ok  ", "diff": "DIFF", "broken": "BAD "}[verdict]
    lines = [f"  {head}  {mutant.name}: {', '.join(observed) or '(none)'}"]
    return verdict, lines + [f"          {n}" for n in notes]


def check_lab(
    info: LabInfo,
    sandbox: Sandbox,
    names: Sequence[str] = (),
    *,
    update: bool = False,
    out: Callable[[str], None] = print,
) -> int:
    """Run a lab's mutants (or those named) and print observed next to declared sets.

    With `update`, a differing (or missing) ``# fails:`` line is rewritten to the observed
    set. Returns the exit status that `main` documents.
    """
    lab = load_lab(info)
    ids = [spec.id for spec in lab.tests]
    solution = run_tests(lab, info.solution, sandbox)
    if not solution.passed:
        out(f"{info.id}: the reference solution fails {', '.join(failing_tests(solution))}")
        return 2
    paths = mutant_paths(info)
    if names:
        wanted = {n.removesuffix(".py") for n in names}
        unknown = sorted(wanted - {p.stem for p in paths})
        if unknown:
            out(f"{info.id}: no mutant named {', '.join(unknown)} in {mutants_dir(info)}")
            return 2
        paths = [p for p in paths if p.stem in wanted]
    out(f"{info.id}: {len(paths)} mutant(s); the tests that do not PASS for each")
    status = 0
    for path in paths:
        try:
            mutant = parse_mutant(path, require_fails=not update)
            result = run_mutant(mutant, info, sandbox, lab)
        except MutantError as e:
            out(f"  ERR   {e}")
            status = 2
            continue
        verdict, lines = _report(mutant, result, ids)
        out("\n".join(lines))
        if verdict == "diff" and update:
            write_fails(path, failing_tests(result))
            out(f"          updated {path}")
        elif verdict != "ok":
            status = max(status, 2 if verdict == "broken" else 1)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m grader.course.mutants LAB [NAME ...] [--update]``; returns the exit status.

    0: every declared set matches (or was updated); 1: some differ; 2: a mutant file or
    the reference solution is broken, or the lab or a mutant name is unknown.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    options = {a for a in args if a.startswith("-")}
    if not args or options - {"--update"}:
        print(_USAGE)
        return 0 if options & {"-h", "--help"} else 2
    update = "--update" in options
    positional = [a for a in args if not a.startswith("-")]
    if not positional:
        print(_USAGE)
        return 2
    try:
        info = resolve_lab(positional[0])
    except UnknownLab as e:
        print(e)
        return 2
    with Sandbox() as sandbox:
        return check_lab(info, sandbox, positional[1:], update=update)


if __name__ == "__main__":
    raise SystemExit(main())
