"""`minillm self-check`: the course checks itself, lab by lab, the way rustlings does.

For every lab:

- ``one-source``: the solution has markers and the committed stubs are the generated ones;
- ``stubs``: the stubs make every test TODO, hidden tests included;
- ``solution``: the reference solution passes every test, hidden tests included;
- ``docstrings``: every stub function has a docstring, a ``# TODO(labNN):`` line and ends
  with ``raise NotImplementedError("labNN: implement <name>")``;
- ``handouts``: every output block of TASK.md and TASK.en.md is what the grader prints, and
  the handouts follow the common layout;
- ``texts``: every title, check name, message and hint that the stub and solution runs
  produce exists in Chinese and in English (English without Chinese outside quotes);
- ``mutants``: every mutant in tests/mutants fails exactly the tests it declares, and so
  does every wrong implementation in tests/fixtures/hidden_mutants, which together fail
  every hidden test (their failure messages join the ``texts`` check);

and once for the course, ``verify-all``: ``minillm verify --all --solution`` exits 0.
A hidden module that does not load is one ``solution`` finding (``file:line: what``), and
the runs that need it are skipped; the command refuses such a course before any check.
`run_self_check` returns the problems as `Finding`s; none means the course is sound.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.course.stubs import NoMarkers, StubError, stub_for
from grader.grade.checks import hidden_problems, load_graded_lab
from grader.i18n import Text
from grader.labs import LabInfo, course_root, load_lab
from grader.results import LabResult, Status
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

__all__ = ["CHECKS", "Finding", "run_self_check", "stub_problems", "text_problems"]

CHECKS = (
    "one-source",
    "stubs",
    "solution",
    "docstrings",
    "handouts",
    "texts",
    "mutants",
    "verify-all",
)
_CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
# a quoted value (a student's output, a model's reply) is not text of ours, and it may be
# cut short or hold quotes of its own: from a line's first quote on, the line is data
_QUOTED = re.compile(r"['\"`][^\n]*")
_SENTENCE = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}")
_HIDDEN_MUTANTS = Path("tests") / "fixtures" / "hidden_mutants"


@dataclass(frozen=True)
class Finding:
    """One problem: which check found it, in which lab ("" for the course), and what."""

    check: str
    lab: str
    problem: str

    def __str__(self) -> str:
        where = f"{self.lab}: " if self.lab else ""
        return f"[{self.check}] {where}{self.problem}"


def stub_problems(info: LabInfo) -> list[str]:
    """What the lab's stub functions lack (docstring, TODO line, the stub's raise)."""
    source = info.student.read_text(encoding="utf-8")
    tree = ast.parse(source)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    if not funcs:
        return ["student.py has no function to write"]
    problems = []
    for fn in funcs:
        body = ast.get_source_segment(source, fn) or ""
        if not ast.get_docstring(fn):
            problems.append(f"{fn.name}() has no docstring")
        if f"# TODO({info.id}):" not in body:
            problems.append(f"{fn.name}() has no '# TODO({info.id}):' line")
        want = f"raise NotImplementedError('{info.id}: implement {fn.name}')"
        if ast.unparse(fn.body[-1]) != want:
            problems.append(f"{fn.name}() does not end with {want}")
    return problems


def _texts(result: LabResult) -> Iterable[tuple[str, Text]]:
    yield "lab title", result.title
    for t in result.tests:
        yield f"[TEST {t.number}] title", t.title
        if t.reason is not None:
            yield f"[TEST {t.number}] reason", t.reason
        for c in t.checks:
            yield f"[TEST {t.number}] check", c.name
            if c.message is not None:
                yield f"[TEST {t.number}] message of {c.name.en!r}", c.message
            for h in c.hints:
                yield f"[TEST {t.number}] hint of {c.name.en!r}", h
    if result.import_error is not None:
        yield "import error", result.import_error


def text_problems(results: Sequence[LabResult]) -> list[str]:
    """Texts that are empty on one side, or in the wrong language on one side."""
    problems = []
    seen: set[tuple[str, str]] = set()
    for result in results:
        for where, text in _texts(result):
            if (text.zh, text.en) in seen:
                continue
            seen.add((text.zh, text.en))
            zh, en = text.zh.strip(), text.en.strip()
            if not zh or not en:
                problems.append(f"{where}: an empty side: {text.zh!r} / {text.en!r}")
            elif _CJK.search(_QUOTED.sub("", en)):
                problems.append(f"{where}: Chinese in the English text: {en[:120]!r}")
            elif not _CJK.search(zh) and _SENTENCE.search(_QUOTED.sub("", zh)) and zh != en:
                problems.append(f"{where}: English in the Chinese text: {zh[:120]!r}")
    return problems


def _statuses(result: LabResult, want: Status) -> list[str]:
    return [f"{t.id} is {t.status.value}" for t in result.tests if t.status is not want]


def _lab(
    info: LabInfo, checks: set[str], sandbox: Sandbox, say: Callable[[str], None]
) -> list[Finding]:
    found: list[Finding] = []

    def add(check: str, problems: Iterable[str]) -> None:
        found.extend(Finding(check, info.id, p) for p in problems)

    if "one-source" in checks:
        try:
            stub = stub_for(info)
            stale = [
                f"{name} differs from the stub generated from the solution (make stubs)"
                for name in ("student.py", ".stub.py")
                if not (info.dir / name).is_file()
                or (info.dir / name).read_text(encoding="utf-8") != stub
            ]
            add("one-source", stale)
        except NoMarkers:
            add("one-source", ["the solution has no '# BEGIN SOLUTION' markers (not one source)"])
        except StubError as e:
            add("one-source", [str(e)])
    if "docstrings" in checks:
        add("docstrings", stub_problems(info))
    runs: list[LabResult] = []
    if checks & {"stubs", "solution", "texts", "mutants"} and (broken := hidden_problems([info])):
        add("solution", broken)  # every run needs the hidden checks: none can run
        checks = checks - {"stubs", "solution", "texts", "mutants"}
    if checks & {"stubs", "solution", "texts"}:
        lab = load_graded_lab(info)
        stub_run = run_tests(lab, info.student, sandbox)
        solution_run = run_tests(lab, info.solution, sandbox)
        runs = [stub_run, solution_run]
        if "stubs" in checks:
            add("stubs", [f"the stub: {p}, not TODO" for p in _statuses(stub_run, Status.TODO)])
        if "solution" in checks:
            add("solution", [f"the solution: {p}" for p in _statuses(solution_run, Status.PASS)])
    if "mutants" in checks:
        problems, results = _mutants(info, sandbox)
        add("mutants", problems)
        runs += results
    if "texts" in checks:
        add("texts", text_problems(runs))
    if "handouts" in checks:
        from grader.course.handout_skeleton import layout_problems
        from grader.course.handouts import sync_lab

        add("handouts", sync_lab(info, sandbox, write=False) + layout_problems(info))
    n = len(found)
    say(f"{info.id}: {'ok' if not n else f'{n} problem(s)'}")
    return found


def _mutants(info: LabInfo, sandbox: Sandbox) -> tuple[list[str], list[LabResult]]:
    """Each mutant fails exactly its declared tests; with hidden checks, each hidden mutant
    (tests/fixtures/hidden_mutants) too, and every hidden test is failed by one of them."""
    from grader.course.mutants import (
        MutantError,
        failing_tests,
        mutant_paths,
        parse_mutant,
        run_mutant,
    )

    problems: list[str] = []
    results: list[LabResult] = []
    public = load_lab(info)
    graded = load_graded_lab(info)
    root = info.dir.parent.parent
    sets = [(public, mutant_paths(info))]
    hidden = {s.id for s in graded.tests if s.hidden}
    if hidden:
        sets.append((graded, sorted((root / _HIDDEN_MUTANTS / info.id).glob("*.py"))))
    caught: set[str] = set()
    for lab, paths in sets:
        ids = [s.id for s in lab.tests]
        for path in paths:
            try:
                mutant = parse_mutant(path, ids)
                result = run_mutant(mutant, info, sandbox, lab)
            except MutantError as e:
                problems.append(str(e))
                continue
            results.append(result)
            failed = failing_tests(result)
            caught |= set(failed)
            if set(failed) != set(mutant.fails):
                problems.append(
                    f"{path.name} fails {', '.join(failed) or 'nothing'}; "
                    f"it declares {', '.join(mutant.fails)}"
                )
    if hidden - caught:
        problems.append(
            f"no wrong implementation fails the hidden {', '.join(sorted(hidden - caught))}"
        )
    return problems, results


def _verify_all(say: Callable[[str], None]) -> list[Finding]:
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "verify", "--all", "--solution"],
        capture_output=True,
        text=True,
        env=env,
        cwd=course_root(),
        timeout=1800,
    )
    say(f"minillm verify --all --solution: exit status {proc.returncode}")
    if proc.returncode == 0:
        return []
    tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
    return [Finding("verify-all", "", f"exit status {proc.returncode}: {tail}")]


def run_self_check(
    labs: Sequence[LabInfo],
    *,
    checks: Iterable[str] = CHECKS,
    say: Callable[[str], None] = lambda _: None,
) -> list[Finding]:
    """Run the chosen checks (all by default) over `labs`; every problem found."""
    wanted = set(checks)
    unknown = wanted - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown self-check(s) {sorted(unknown)}; the checks are {CHECKS}")
    found: list[Finding] = []
    with Sandbox() as sandbox:
        for info in labs:
            if not Path(info.solution).is_file():
                found.append(
                    Finding("solution", info.id, f"no reference solution at {info.solution}")
                )
                continue
            found += _lab(info, wanted, sandbox, say)
    if "verify-all" in wanted:
        found += _verify_all(say)
    return found
