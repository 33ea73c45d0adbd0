"""The runner: prerequisites, grader bugs kept apart from student bugs, seeds in messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.dsl import Lab, TestContext
from grader.results import Status
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

STUDENT = """
def ok(x):
    return x

def wrong(x):
    return x + 1

def todo(x):
    raise NotImplementedError("labxx: implement todo")
"""


@pytest.fixture
def student(tmp_path: Path) -> Path:
    path = tmp_path / "student.py"
    path.write_text(STUDENT)
    return path


def make_lab() -> Lab:
    lab = Lab("labxx", "测试", "test")

    @lab.test("通过", "passes")
    def passes(t: TestContext) -> None:
        t.equal("ok", t.call("ok", 1).value, 1)

    @lab.test("失败", "fails")
    def fails(t: TestContext) -> None:
        rng = t.rng(1234)
        x = int(rng.integers(10))
        t.equal("wrong", t.call("wrong", x).value, x)
        t.equal("still runs", t.call("ok", 2).value, 2)

    @lab.test("未完成", "todo")
    def todo(t: TestContext) -> None:
        t.equal("todo", t.call("todo", 1).value, 1)

    @lab.test("依赖失败的测试", "needs a failed test", requires=[fails])
    def after_fail(t: TestContext) -> None:
        t.equal("never", t.call("ok", 1).value, 1)

    @lab.test("依赖未完成的测试", "needs a todo test", requires=[todo])
    def after_todo(t: TestContext) -> None:
        t.equal("never", t.call("ok", 1).value, 1)

    @lab.test("评测程序自己出错", "grader bug")
    def grader_bug(t: TestContext) -> None:
        t.equal("ok", t.call("ok", 1).value, 1)
        raise ZeroDivisionError("in verify.py")

    @lab.test("之后照常", "later tests still run", requires=[passes])
    def later(t: TestContext) -> None:
        t.equal("ok", t.call("ok", 3).value, 3)

    return lab


def test_statuses_and_reasons(student: Path, sandbox: Sandbox) -> None:
    result = run_tests(make_lab(), student, sandbox)
    got = {t.id: t.status for t in result.tests}
    assert got == {
        "passes": Status.PASS,
        "fails": Status.FAIL,
        "todo": Status.TODO,
        "after_fail": Status.SKIP,
        "after_todo": Status.TODO,
        "grader_bug": Status.GRADER,
        "later": Status.PASS,
    }
    by_id = {t.id: t for t in result.tests}
    assert by_id["after_fail"].reason is not None
    assert "[TEST 2]" in by_id["after_fail"].reason.en
    assert "complete [TEST 3]" in by_id["after_todo"].reason.en  # type: ignore[union-attr]
    bug = by_id["grader_bug"].checks[-1]
    assert "not a problem with your code" in bug.message.en  # type: ignore[union-attr]
    assert "ZeroDivisionError" in bug.message.en  # type: ignore[union-attr]


def test_until_ends_the_run_after_the_first_test_it_holds_for(
    student: Path, sandbox: Sandbox
) -> None:
    full = run_tests(make_lab(), student, sandbox)
    cut = run_tests(make_lab(), student, sandbox, until=lambda t: t.status is not Status.PASS)
    assert [t.id for t in cut.tests] == ["passes", "fails"]
    assert [(t.status, t.checks) for t in cut.tests] == [
        (t.status, t.checks) for t in full.tests[:2]
    ]
    third = run_tests(make_lab(), student, sandbox, until=lambda t: t.number == 3)
    assert [t.status for t in third.tests] == [Status.PASS, Status.FAIL, Status.TODO]


def test_a_failed_check_does_not_stop_the_test_and_prints_the_seed(
    student: Path, sandbox: Sandbox
) -> None:
    result = run_tests(make_lab(), student, sandbox)
    fails = next(t for t in result.tests if t.id == "fails")
    assert [c.status for c in fails.checks] == [Status.FAIL, Status.PASS]
    assert "seed=1234" in fails.checks[0].message.en  # type: ignore[union-attr]


def test_duplicate_and_unknown_prerequisites_are_refused() -> None:
    lab = Lab("labxx", "测试", "test")

    @lab.test("a", "a")
    def a(t: TestContext) -> None: ...

    with pytest.raises(ValueError, match="duplicate"):
        lab.test("a", "a")(a)
    with pytest.raises(ValueError, match="unknown"):
        lab.test("b", "b", requires=["nope"])(lambda t: None)


def test_a_test_without_checks_is_an_error(student: Path, sandbox: Sandbox) -> None:
    lab = Lab("labxx", "测试", "test")

    @lab.test("空", "empty")
    def empty(t: TestContext) -> None:
        t.call("ok", 1)

    result = run_tests(lab, student, sandbox)
    assert result.tests[0].status is Status.ERROR


def test_skip_for_ends_a_test_as_skip_naming_the_test_to_fix_first(
    student: Path, sandbox: Sandbox
) -> None:
    lab = Lab("labxx", "测试", "test")

    @lab.test("核心", "core")
    def core(t: TestContext) -> None:
        t.equal("wrong(1)", t.call("wrong", 1).value, 1)

    @lab.test("视图", "views", metamorphic=True)
    def views(t: TestContext) -> None:
        t.skip_for(core)

    result = run_tests(lab, student, sandbox)
    test = result.tests[1]
    assert test.status is Status.SKIP
    assert test.reason is not None and test.reason.en.startswith("fix TEST 1 first: ")
    assert test.reason.zh.startswith("先修好 TEST 1：")
    assert lab.tests[1].metamorphic and not lab.tests[0].metamorphic
    from grader.render.lab import render_plain

    assert "[SKIP] fix TEST 1 first" in render_plain(result, "en")
