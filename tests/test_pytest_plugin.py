"""`pytest labs/labNN` runs a lab's verify tests as pytest items (grader/student/pytest_plugin.py).

Most tests use a small lab built in pytester's folder, so that each property (prerequisites,
one sandbox child, messages, line numbers) has an input that shows it; one runs the real
lab04 against its reference solution.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader.i18n import tr
from grader.labs import all_labs, load_lab
from grader.render.lab import render_lines, render_test_block
from grader.results import LabResult, Status, TestResult

pytest_plugins = ["pytester"]

VERIFY = '''
"""A small lab for the plugin's tests."""

from __future__ import annotations

from grader.dsl import Lab, TestContext

lab = Lab("lab90", "插件测试", "plugin test")


@lab.test("add_one 加一", "add_one adds one")
def first(t: TestContext) -> int:
    value = t.call("add_one", 1).value
    t.equal("add_one(1) = 2", value, 2)
    return value  # handed to the tests that require this one


@lab.test(
    "twice 翻倍",
    "twice doubles",
    requires=[first],
)
def second(t: TestContext) -> None:
    t.equal("twice(add_one(1)) = 4", t.call("twice", t.result_of(first)).value, 4)


@lab.test("同一个子进程", "the same child serves the run")
def counted(t: TestContext) -> None:
    t.equal("count() = 1", t.call("count").value, 1)


@lab.test("同一个子进程（续）", "the same child serves the run, again")
def counted_again(t: TestContext) -> None:
    t.equal("count() = 2", t.call("count").value, 2)
'''

STUB = '''
def add_one(x):
    """x + 1."""
    # TODO(lab90): return x + 1
    raise NotImplementedError("lab90: implement add_one")


def twice(x):
    """2 * x."""
    # TODO(lab90): return 2 * x
    raise NotImplementedError("lab90: implement twice")


def count():
    """How often count() was called in this process."""
    # TODO(lab90): count
    raise NotImplementedError("lab90: implement count")
'''

SOLUTION = """
_calls = []


def add_one(x):
    return x + 1


def twice(x):
    return 2 * x


def count():
    _calls.append(1)  # module state: survives between tests only in one child process
    return len(_calls)
"""


@pytest.fixture
def course(pytester: pytest.Pytester) -> Path:
    """labs/lab90 (verify.py, stub student.py) and solutions/lab90 in pytester's folder."""
    root = pytester.path
    (root / "labs" / "lab90").mkdir(parents=True)
    (root / "solutions" / "lab90").mkdir(parents=True)
    (root / "labs" / "lab90" / "verify.py").write_text(VERIFY.lstrip())
    (root / "labs" / "lab90" / "student.py").write_text(STUB.lstrip())
    (root / "solutions" / "lab90" / "student.py").write_text(SOLUTION.lstrip())
    return root


def _impl(root: Path, name: str, source: str) -> str:
    path = root / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_collection_lists_the_labs_tests(pytester: pytest.Pytester, course: Path) -> None:
    result = pytester.runpytest("--collect-only", "-q", "labs/lab90")
    result.stdout.fnmatch_lines(
        [
            "labs/lab90/verify.py::first",
            "labs/lab90/verify.py::second",
            "labs/lab90/verify.py::counted",
            "labs/lab90/verify.py::counted_again",
        ]
    )
    assert result.ret == 0


def test_collection_of_a_real_lab(pytester: pytest.Pytester) -> None:
    info = next(i for i in all_labs() if i.id == "lab04")
    result = pytester.runpytest("--collect-only", "-q", str(info.verify))
    ids = [spec.id for spec in load_lab(info).tests]
    result.stdout.fnmatch_lines([f"*lab04/verify.py::{i}" for i in ids])
    result.stdout.fnmatch_lines([f"{len(ids)} tests collected*"])


def test_solution_mode_passes(pytester: pytest.Pytester, course: Path) -> None:
    result = pytester.runpytest("labs/lab90", "--minillm-impl", "solution")
    result.assert_outcomes(passed=4)


def test_real_lab_solution_passes(pytester: pytest.Pytester) -> None:
    info = next(i for i in all_labs() if i.id == "lab04")
    result = pytester.runpytest(str(info.verify), "--minillm-impl", "solution")
    result.assert_outcomes(passed=len(load_lab(info).tests))


def test_one_sandbox_child_serves_the_whole_run(pytester: pytest.Pytester, course: Path) -> None:
    # count() returns 2 in the second test only if the first test's child served it too
    result = pytester.runpytest("labs/lab90", "--minillm-impl", "solution", "-k", "counted")
    result.assert_outcomes(passed=2, deselected=2)


def test_deselected_prerequisite_runs_first(pytester: pytest.Pytester, course: Path) -> None:
    # `second` passes only if it gets the value that `first` returned (t.result_of)
    result = pytester.runpytest("labs/lab90", "--minillm-impl", "solution", "-k", "second")
    result.assert_outcomes(passed=1, deselected=3)


def test_deselected_prerequisite_that_fails_is_named(
    pytester: pytest.Pytester, course: Path
) -> None:
    wrong = _impl(
        course,
        "wrong.py",
        """
        def add_one(x):
            return x

        def twice(x):
            return 2 * x
        """,
    )
    result = pytester.runpytest(
        "labs/lab90", "--minillm-impl", wrong, "--minillm-lang", "en", "-k", "second", "-rs"
    )
    result.assert_outcomes(skipped=1, deselected=3)
    result.stdout.fnmatch_lines(["*needs [[]TEST 1[]] to pass first*"])
    assert "TEST 0" not in result.stdout.str()


def test_a_mutant_file_runs_as_the_solution_plus_its_override(
    pytester: pytest.Pytester, course: Path
) -> None:
    mutants = course / "tests" / "mutants" / "lab90"
    mutants.mkdir(parents=True)
    mutant = _impl(
        mutants,
        "twice_adds.py",
        '''
        """Mutant: twice adds 3 instead of doubling."""

        # fails: second

        def twice(x):
            return x + 3
        ''',
    )
    result = pytester.runpytest("labs/lab90", "--minillm-impl", mutant, "--minillm-lang", "en")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*[[]FAIL[]] twice(add_one(1)) = 4", "*expected 4, got 5*"])


def test_stub_mode_reports_todo_as_a_skip_not_a_failure(
    pytester: pytest.Pytester, course: Path
) -> None:
    """A stub is TODO in `make test`, so pytest skips it with reason "TODO: …" (no FAILED)."""
    result = pytester.runpytest(
        "labs/lab90", "--minillm-lang", "en", "-k", "first or second", "-rs"
    )
    result.assert_outcomes(skipped=2, deselected=2)
    assert result.ret == 0
    assert "FAILED" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] *verify.py:*: TODO: add_one is not implemented yet",
            "SKIPPED [[]1[]] *verify.py:*: TODO: complete [[]TEST 1[]] first",
        ],
        consecutive=False,
    )


def test_stub_mode_in_chinese(pytester: pytest.Pytester, course: Path) -> None:
    result = pytester.runpytest("labs/lab90", "--minillm-lang", "zh", "-k", "first", "-rs")
    result.assert_outcomes(skipped=1, deselected=3)
    result.stdout.fnmatch_lines(["SKIPPED*TODO: add_one 还没有实现"])


def test_a_student_that_cannot_be_imported(pytester: pytest.Pytester, course: Path) -> None:
    broken = _impl(course, "broken.py", "def add_one(x)\n    return x + 1\n")
    result = pytester.runpytest("labs/lab90", "--minillm-impl", broken, "--minillm-lang", "en")
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(
        ["*[[]ERROR[]] cannot import student.py", "  syntax error at broken.py:1*"]
    )


def test_reportinfo_points_at_the_test_in_verify_py(
    pytester: pytest.Pytester, course: Path
) -> None:
    items, _ = pytester.inline_genitems("labs/lab90", "--minillm-lang", "en")
    lines = (course / "labs" / "lab90" / "verify.py").read_text().splitlines()
    assert [item.location[2] for item in items] == [
        "[TEST 1] add_one adds one",
        "[TEST 2] twice doubles",
        "[TEST 3] the same child serves the run",
        "[TEST 4] the same child serves the run, again",
    ]
    for item in items:
        path, line, _ = item.location
        assert path == "labs/lab90/verify.py"
        assert lines[line].startswith("@lab.test("), (item.name, line, lines[line])
        declared = next(i for i in range(line, len(lines)) if lines[i].startswith("def "))
        assert lines[declared].startswith(f"def {item.name}(t: TestContext) -> ")


def test_reportinfo_of_a_real_lab(pytester: pytest.Pytester) -> None:
    info = next(i for i in all_labs() if i.id == "lab04")
    items, _ = pytester.inline_genitems(str(info.verify))
    lines = info.verify.read_text(encoding="utf-8").splitlines()
    assert len(items) == len(load_lab(info).tests)
    for item in items:
        line = item.location[1]
        assert lines[line].startswith("@lab.test("), (item.name, lines[line])


def test_render_test_block_is_the_reports_block() -> None:
    tests = [
        TestResult("a", 1, tr("甲", "a"), Status.PASS),
        TestResult("b", 2, tr("乙", "b"), Status.TODO, [], tr("先完成", "complete [TEST 1] first")),
    ]
    plain = render_lines(LabResult("lab90", tr("测", "test"), "x", 0.0, tests), "en")
    for test in tests:
        block = render_test_block(test, "en")
        start = plain.index(block[0])
        assert plain[start : start + len(block)] == block


def test_without_the_sandbox_the_header_says_so_and_code_runs_here(
    pytester: pytest.Pytester, course: Path
) -> None:
    result = pytester.runpytest("labs/lab90", "--minillm-impl", "solution", "--minillm-no-sandbox")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["minillm: --minillm-no-sandbox: your code runs inside*"])


def test_without_the_sandbox_an_error_is_the_students_traceback(
    pytester: pytest.Pytester, course: Path
) -> None:
    broken = _impl(
        course,
        "broken.py",
        """
        def add_one(x):
            values = {}
            return values[x] + 1  # KeyError here


        def twice(x):
            return 2 * x


        def count():
            return 1
        """,
    )
    result = pytester.runpytest(
        "labs/lab90", "--minillm-impl", broken, "--minillm-no-sandbox", "-k", "first"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*broken.py:4: KeyError*"])


def test_pdb_stops_at_the_students_line(pytester: pytest.Pytester, course: Path) -> None:
    broken = _impl(
        course,
        "broken.py",
        """
        def add_one(x):
            values = {}
            return values[x] + 1  # KeyError here


        def twice(x):
            return 2 * x


        def count():
            return 1
        """,
    )
    child = pytester.spawn_pytest(
        f"labs/lab90 --minillm-impl {broken} --minillm-no-sandbox -k first --pdb "
        "-p no:cacheprovider"
    )
    child.expect(r"broken\.py\(4\)add_one\(\)")
    child.sendline("p values")
    child.expect(r"\{\}")
    child.sendline("c")
    child.expect("1 failed")
    child.wait()


_FLAG_TEST = """
import sys

def test_flag():
    assert "grader.student.pytest_plugin" in sys.modules  # the plugin, and the grader, loaded
    print("dont_write_bytecode =", sys.dont_write_bytecode)
"""


@pytest.mark.parametrize("env_value", [None, "1"])
def test_a_pytest_process_keeps_the_users_bytecode_setting(
    env_value: str | None, tmp_path: Path
) -> None:
    # importing the grader (this plugin does) stops bytecode writing in the grader's own
    # processes; in pytest's, it is put back: pytest then caches the plugins' rewritten
    # asserts instead of redoing them on every run (0.8 s of a lab's 1.5 s)
    import os
    import subprocess
    import sys

    (tmp_path / "test_flag.py").write_text(_FLAG_TEST, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if env_value is not None:
        env["PYTHONDONTWRITEBYTECODE"] = env_value
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_flag.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"dont_write_bytecode = {env_value is not None}" in done.stdout, done.stdout
