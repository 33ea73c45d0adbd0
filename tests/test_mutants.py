"""The course tests itself: every wrong implementation in tests/mutants is caught, for its bug.

A mutant (`tests/mutants/labNN/<bug>.py`, see `grader/course/mutants.py`) is the reference solution
with one function overridden by a realistic bug. Its line ``# fails: test_a, test_b`` names
EXACTLY the tests that do not PASS for it: a mutant that also fails another test has a
second, accidental bug (or the checks changed), and one that passes a declared test is no
longer caught there. And every check of every lab must be failed by at least one mutant: a
check that no wrong implementation can fail is not a check.

Each mutant runs once per session, in the session's sandbox; `python -m grader.course.mutants labNN`
shows the observed sets and `--update` rewrites the lines.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import cli
from grader.course.diagnoses import build_catalogue, same_catalogue
from grader.course.diagnoses import figures as diagnosis_figures
from grader.course.mutants import (
    SEPARATOR,
    Mutant,
    MutantError,
    as_student,
    check_lab,
    compose,
    failing_tests,
    main,
    mutant_paths,
    parse_mutant,
    run_mutant,
    write_fails,
)
from grader.diagnose.catalogue import FILENAME, Catalogue
from grader.dsl import Lab
from grader.labs import LabInfo, all_labs, load_lab
from grader.results import LabResult, Status, TestResult
from grader.runner import run_tests
from grader.sandbox.client import Sandbox
from grader.spec import hint_levels

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

MIN_MUTANTS = 6
MUTANTS = [(info, path) for info in all_labs() for path in mutant_paths(info)]


@cache
def _lab(info: LabInfo) -> Lab:
    return load_lab(info)


def _ids(info: LabInfo) -> list[str]:
    return [spec.id for spec in _lab(info).tests]


_results: dict[Path, LabResult] = {}


def _result(info: LabInfo, path: Path, sandbox: Sandbox) -> LabResult:
    """The mutant's run, once per session."""
    if path not in _results:
        mutant = parse_mutant(path, _ids(info))
        _results[path] = run_mutant(mutant, info, sandbox, _lab(info))
    return _results[path]


_solutions: dict[str, LabResult] = {}


def _solution(info: LabInfo, sandbox: Sandbox) -> LabResult:
    if info.id not in _solutions:
        _solutions[info.id] = run_tests(_lab(info), info.solution, sandbox)
    return _solutions[info.id]


def _why(test: TestResult) -> str:
    """A test's status and its first non-PASS line, for an assertion message."""
    bad = next((c for c in test.checks if c.status is not Status.PASS), None)
    if bad is not None:
        detail = f"{bad.name.en}: {bad.message.en if bad.message else ''}"
    else:
        detail = test.reason.en if test.reason else ""
    return f"{test.id} {test.status.value} ({detail.strip().splitlines()[0] if detail else ''})"


@pytest.mark.parametrize(("info", "path"), MUTANTS, ids=[f"{i.id}-{p.stem}" for i, p in MUTANTS])
def test_mutant_fails_exactly_its_declared_tests(
    info: LabInfo, path: Path, sandbox: Sandbox
) -> None:
    mutant = parse_mutant(path, _ids(info))
    result = _result(info, path, sandbox)
    assert result.import_error is None, f"{path.name} cannot be imported: {result.import_error.en}"
    observed = failing_tests(result)
    by_id = {t.id: t for t in result.tests}
    todo = [t.id for t in result.tests if t.status is Status.TODO]
    assert not todo, f"{path.name} raises the stub's error (TODO) in {todo}"
    extra = [by_id[i] for i in observed if i not in mutant.fails]
    passing = [i for i in mutant.fails if i not in observed]
    assert not extra and not passing, (
        f"{info.id}/{path.name}: declared '# fails: {', '.join(mutant.fails)}'\n"
        + "".join(f"  also fails (a second bug, or a new check?): {_why(t)}\n" for t in extra)
        + "".join(f"  passes, though declared: {i}\n" for i in passing)
        + f"  review, then: python -m grader.course.mutants {info.id} {path.stem} --update"
    )


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_labs_have_enough_mutants(info: LabInfo) -> None:
    found = len(mutant_paths(info))
    assert found >= MIN_MUTANTS, f"{info.id}: {found} mutants, fewer than {MIN_MUTANTS}"


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_every_check_can_fail(info: LabInfo, sandbox: Sandbox) -> None:
    """Each check of the solution run is failed by some mutant.

    A mutant 'fails' a check when that check's line is not PASS, or when its test ended
    (exception, timeout, ...) while computing that check's input: the first check the
    solution has that the mutant's run never reached.
    """
    solution = _solution(info, sandbox)
    assert solution.passed, f"{info.id}: the reference solution fails {failing_tests(solution)}"
    covered: set[tuple[str, str]] = set()
    for lab_info, path in MUTANTS:
        if lab_info.id != info.id:
            continue
        for test in _result(info, path, sandbox).tests:
            names = [c.name.en for c in test.checks]
            covered.update((test.id, c.name.en) for c in test.checks if c.status is not Status.PASS)
            ref = next(t for t in solution.tests if t.id == test.id)
            ended_early = test.status in (Status.ERROR, Status.TIMEOUT, Status.FAIL)
            unreached = [c.name.en for c in ref.checks if c.name.en not in names]
            if ended_early and unreached:
                covered.add((test.id, unreached[0]))
    missing = [
        f"[{t.id}] {c.name.en}"
        for t in solution.tests
        for c in t.checks
        if (t.id, c.name.en) not in covered
    ]
    assert not missing, "checks that no mutant fails:\n  " + "\n  ".join(missing)


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_failed_checks_carry_their_own_hints(info: LabInfo, sandbox: Sandbox) -> None:
    """Under a failed check stands that check's own hint, not its test's first one.

    Only a test with a single check may leave it to the test's hint: there, nothing more
    specific can be said. (A line that ends a test, such as an exception, keeps the
    test's hint: it is about the call, not about one assertion.)
    """
    lab = _lab(info)
    solution = _solution(info, sandbox)
    sizes = {t.id: len(t.checks) for t in solution.tests}
    test_hint = {s.id: hint_levels(s.hint) for s in lab.tests}
    borrowed: list[str] = []
    for lab_info, path in MUTANTS:
        if lab_info.id != info.id:
            continue
        for test in _result(info, path, sandbox).tests:
            own = test_hint[test.id]
            for c in test.checks:
                if c.status is not Status.FAIL or sizes.get(test.id, 0) < 2:
                    continue
                if not c.hints or (own and c.hints[0] == own[0]):
                    borrowed.append(f"{path.stem}: [{test.id}] {c.name.en}")
    assert not borrowed, "failed checks without a hint of their own:\n  " + "\n  ".join(
        sorted(set(borrowed))
    )


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_blame_lands_on_the_test_about_the_bug(info: LabInfo, sandbox: Sandbox) -> None:
    """A metamorphic test (views, ndarrays) fails only for a bug blind to that input kind.

    A core bug (a missing transpose) may make such a test SKIP ("fix TEST n first") but
    never FAIL or ERROR it; a mutant with a ``# blind:`` line fails at least one of them.
    """
    meta = {s.id for s in _lab(info).tests if s.metamorphic}
    wrong: list[str] = []
    for lab_info, path in MUTANTS:
        if lab_info.id != info.id:
            continue
        mutant = parse_mutant(path, _ids(info))
        hit = [
            t.id
            for t in _result(info, path, sandbox).tests
            if t.id in meta and t.status not in (Status.PASS, Status.SKIP)
        ]
        if mutant.blind is None and hit:
            wrong.append(f"{path.stem} (a core bug) fails {', '.join(hit)}")
        if mutant.blind is not None and not hit:
            wrong.append(f"{path.stem} (blind: {mutant.blind}) fails no metamorphic test")
    assert not wrong, "\n  ".join(["blame on the wrong test:", *wrong])


@pytest.mark.parametrize(("info", "path"), MUTANTS, ids=[f"{i.id}-{p.stem}" for i, p in MUTANTS])
def test_mutant_says_its_bug_in_both_languages(info: LabInfo, path: Path) -> None:
    """A diagnosis quotes the mutant's words, so both must be there and say something."""
    mutant = parse_mutant(path, _ids(info))
    assert len(mutant.bug) >= 8, f"{path}: the docstring names no bug"
    assert len(mutant.bug_zh) >= 4, f"{path}: needs a '# zh: <the bug in Chinese>' line"
    assert any("\u4e00" <= ch <= "\u9fff" for ch in mutant.bug_zh), (
        f"{path}: '# zh:' is not Chinese"
    )


def _runs(info: LabInfo, sandbox: Sandbox) -> list[tuple[Mutant, LabResult]]:
    return [
        (parse_mutant(path, _ids(info)), _result(info, path, sandbox))
        for lab_info, path in MUTANTS
        if lab_info.id == info.id
    ]


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_the_shipped_diagnoses_are_those_the_mutants_give(info: LabInfo, sandbox: Sandbox) -> None:
    """``labs/labNN/diagnoses.json`` is what ``make diagnoses`` builds from the mutants now."""
    path = info.dir / FILENAME
    assert path.is_file(), f"{path} is missing: make diagnoses"
    diffs = same_catalogue(build_catalogue(info.id, _runs(info, sandbox)), Catalogue.load(path))
    assert not diffs, f"{path} is out of date, rebuild with make diagnoses:\n  " + "\n  ".join(
        diffs[:10]
    )


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_a_mutants_report_names_its_own_bug(info: LabInfo, sandbox: Sandbox) -> None:
    """Most of a lab's mutants are diagnosed as themselves (or as a mutant no check tells
    apart), and no diagnosed line names a bug whose fingerprint is not the line's. A bug
    whose output changes from run to run (one that draws from the global random
    generator) has unstable fingerprints, which match nothing: hence 85% per lab, and 90%
    over the course (the next test)."""
    figures = diagnosis_figures(Catalogue.load(info.dir / FILENAME), _runs(info, sandbox))
    _named[info.id] = (figures.named, figures.mutants)
    assert figures.wrong_lines == 0
    assert figures.named >= 0.85 * figures.mutants, (
        f"{info.id}: {figures.named}/{figures.mutants} named; not: {figures.unnamed}"
    )


_named: dict[str, tuple[int, int]] = {}


def test_nine_in_ten_catalogued_mutants_are_named_as_themselves(sandbox: Sandbox) -> None:
    for info in all_labs():
        if info.id not in _named:
            runs = _runs(info, sandbox)
            f = diagnosis_figures(Catalogue.load(info.dir / FILENAME), runs)
            _named[info.id] = (f.named, f.mutants)
    named = sum(n for n, _ in _named.values())
    total = sum(m for _, m in _named.values())
    assert named >= 0.9 * total, f"{named}/{total} mutants named as themselves: {_named}"


# -- the mutant format itself ---------------------------------------------------------------

GOOD = '''"""Mutant: adds one."""

# fails: a, b

from __future__ import annotations


def f(x: int) -> int:
    return x + 1
'''
SOLUTION = '''"""The solution."""

from __future__ import annotations


def f(x: int) -> int:
    return x


def g(x: int) -> int:
    return f(x)
'''


def _write(tmp_path: Path, text: str, name: str = "adds_one.py") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_parse_reads_the_bug_and_the_declared_tests(tmp_path: Path) -> None:
    mutant = parse_mutant(_write(tmp_path, GOOD), ["a", "b", "c"])
    assert (mutant.name, mutant.bug, mutant.fails) == ("adds_one", "adds one.", ("a", "b"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace('"""Mutant: adds one."""', "# no docstring"), "needs a docstring"),
        (GOOD.replace("# fails: a, b", ""), "exactly one '# fails:"),
        (GOOD.replace("# fails: a, b", "# fails: a\n# fails: b"), "found 2"),
        (GOOD.replace("# fails: a, b", "# fails:"), "lists no test"),
        (GOOD.replace("# fails: a, b", "# fails: a, a"), "lists a more than once"),
        (GOOD.replace("# fails: a, b", "# fails: a, typo"), "unknown test id(s) typo"),
        (GOOD.replace("return x + 1", "return x +"), "syntax error"),
    ],
)
def test_parse_rejects_a_malformed_mutant(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(MutantError) as err:
        parse_mutant(path, ["a", "b", "c"])
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_unknown_id_message_lists_the_labs_tests(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.replace("# fails: a, b", "# fails: z"))
    with pytest.raises(MutantError, match="the lab's tests are: a, b, c"):
        parse_mutant(path, ["a", "b", "c"])


def test_compose_is_the_solution_then_the_override(tmp_path: Path) -> None:
    program = compose(SOLUTION, parse_mutant(_write(tmp_path, GOOD)))
    head, tail = program.split(SEPARATOR.format(name="adds_one"))
    assert head.strip() == SOLUTION.strip()
    assert "__future__" not in tail and "return x + 1" in tail
    namespace: dict[str, object] = {}
    exec(compile(program, "student.py", "exec"), namespace)  # the override wins, g uses it
    g = namespace["g"]
    assert callable(g) and g(1) == 2


def test_compose_rejects_a_mutant_that_overrides_nothing(tmp_path: Path) -> None:
    mutant = parse_mutant(_write(tmp_path, GOOD.replace("def f(", "def typo(")))
    with pytest.raises(MutantError, match="overrides no function of the solution"):
        compose(SOLUTION, mutant)


def test_write_fails_rewrites_or_adds_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    write_fails(path, ["c"])
    assert parse_mutant(path).fails == ("c",)
    assert path.read_text(encoding="utf-8").count("# fails:") == 1
    bare = _write(tmp_path, GOOD.replace("# fails: a, b\n", ""), "bare.py")
    write_fails(bare, ["a", "c"])
    assert parse_mutant(bare).fails == ("a", "c")
    assert parse_mutant(bare).bug == "adds one."


def test_as_student_builds_a_mutant_and_passes_other_files_through(tmp_path: Path) -> None:
    info = next(i for i in all_labs() if i.id == "lab04")
    mutant = mutant_paths(info)[0]
    with as_student(mutant, info) as student:
        assert student.name == "student.py" and student.parent != mutant.parent
        text = student.read_text(encoding="utf-8")
        assert text.startswith(info.solution.read_text(encoding="utf-8").rstrip("\n"))
        assert SEPARATOR.format(name=mutant.stem) in text
    assert not student.exists()
    with as_student(info.solution, info) as student:
        assert student == info.solution


# -- the command line -------------------------------------------------------------------------


def _course(tmp_path: Path, info: LabInfo) -> LabInfo:
    """A course folder with the real lab and solution, and an empty mutants folder."""
    (tmp_path / "labs").mkdir()
    (tmp_path / "solutions").mkdir()
    (tmp_path / "labs" / info.id).symlink_to(info.dir)
    (tmp_path / "solutions" / info.id).symlink_to(info.solution.parent)
    (tmp_path / "tests" / "mutants" / info.id).mkdir(parents=True)
    return LabInfo(info.id, tmp_path / "labs" / info.id)


def test_check_lab_shows_a_difference_and_update_fixes_it(tmp_path: Path, sandbox: Sandbox) -> None:
    real = next(i for i in all_labs() if i.id == "lab02")
    info = _course(tmp_path, real)
    mutants = tmp_path / "tests" / "mutants" / "lab02"
    source = (real.dir.parent.parent / "tests/mutants/lab02/no_type_check.py").read_text()
    wrong = _write(
        mutants, source.replace("# fails: encode_errors", "# fails: encode_known"), "x.py"
    )
    lines: list[str] = []
    assert check_lab(info, sandbox, out=lines.append) == 1
    text = "\n".join(lines)
    assert "DIFF  x: encode_errors" in text
    assert "+ fails, not declared: encode_errors" in text
    assert "- declared, but passes: encode_known" in text
    assert check_lab(info, sandbox, ["x"], update=True, out=lines.append) == 0
    assert parse_mutant(wrong).fails == ("encode_errors",)
    assert check_lab(info, sandbox, out=lines.append) == 0


def test_check_lab_flags_a_mutant_that_passes_everything(tmp_path: Path, sandbox: Sandbox) -> None:
    real = next(i for i in all_labs() if i.id == "lab02")
    info = _course(tmp_path, real)
    solution = real.solution.read_text(encoding="utf-8")
    same = solution.replace('"""Lab02 reference solution', '"""Mutant: no bug at all')
    _write(
        tmp_path / "tests" / "mutants" / "lab02",
        same.replace("\n\n", "\n\n# fails: encode_known\n\n", 1),
        "same.py",
    )
    lines: list[str] = []
    assert check_lab(info, sandbox, update=True, out=lines.append) == 2
    assert "passes every test" in "\n".join(lines)


def test_verify_runs_a_mutant_file_with_its_solution() -> None:
    info = next(i for i in all_labs() if i.id == "lab02")
    path = next(p for p in mutant_paths(info) if p.stem == "no_type_check")
    result = CliRunner().invoke(cli, ["verify", "lab02", "--impl", str(path), "--lang", "en"])
    assert result.exit_code == 1, result.output
    n = len(_ids(info))
    assert f"Result: {n - 1}/{n} tests passed (1 failed)" in result.output, result.output
    assert result.output.count("[FAIL]") == 1  # encode_byte(tok, 65.0) did not raise


def test_main_reports_usage_and_unknown_labs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage:" in capsys.readouterr().out
    assert main(["lab04", "--updat"]) == 2
    assert main(["lab99"]) == 2
    assert "unknown lab 'lab99'" in capsys.readouterr().out


def test_every_mutant_parses_as_documented() -> None:
    """Docstring 'Mutant: ...' and known test ids, checked without running anything."""
    for info, path in MUTANTS:
        mutant: Mutant = parse_mutant(path, _ids(info))
        assert mutant.source.startswith('"""Mutant:'), f"{path}: docstring must open 'Mutant:'"
