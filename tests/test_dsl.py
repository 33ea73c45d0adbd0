"""The check DSL judges what students really write, through a real sandbox.

Each test writes a small student.py, declares a tiny `Lab`, runs it and reads the verdict.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from framework import tensor_from
from grader.dsl import Lab, TestContext
from grader.results import LabResult, Status
from grader.runner import run_tests
from grader.sandbox.client import Sandbox


def run(lab: Lab, source: str, tmp_path: Path, sandbox: Sandbox) -> LabResult:
    path = tmp_path / "student.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return run_tests(lab, path, sandbox)


STUDENT = """
import numpy as np
from framework import Tensor, as_tensor, tensor_from

def soft(x):
    return "not an array"

def flat(x):
    t = as_tensor(x)
    return tensor_from(t.data[t.offset : t.offset + t.size].reshape(t.shape) * 2)

def right(x):
    return tensor_from(as_tensor(x).numpy() * 2)

def add_into_copy(a, b):
    a = tensor_from(a.numpy() + b.numpy())
    return None

def add_in_place(a, b):
    a.numpy()[...] += as_tensor(b).numpy()

def add_flat(a, b):
    a.data[:] += 1.0

class Everything(ValueError, TypeError, IndexError):
    pass

def bad_input(x):
    raise Everything("whatever you want")

def value_error(x):
    raise ValueError("x must be positive")

def index_error(x):
    raise IndexError("no")

def raises_inside(x):
    raise KeyError("oops")

def returns(x):
    return x
"""


def statuses(result: LabResult) -> dict[str, Status]:
    return {t.id: t.status for t in result.tests}


def test_a_wrong_return_type_is_the_students_fail(tmp_path: Path, sandbox: Sandbox) -> None:
    lab = Lab("labxx", "x", "x")

    @lab.test("x", "x")
    def strings(t: TestContext) -> None:
        out = t.call("soft", np.zeros(3, np.float32)).value
        arr = t.array(("softmax 的输出", "softmax output"), out, (3,))
        assert arr is None
        t.number(("一个数", "a number"), out)

    result = run(lab, STUDENT, tmp_path, sandbox)
    (test,) = result.tests
    assert test.status is Status.FAIL
    assert [c.status for c in test.checks] == [Status.FAIL, Status.FAIL]
    assert "got str" in test.checks[0].message.en  # type: ignore[union-attr]
    assert "grader" not in test.checks[0].message.en  # type: ignore[union-attr]


def test_views_catch_code_that_ignores_strides(tmp_path: Path, sandbox: Sandbox) -> None:
    lab = Lab("labxx", "x", "x")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    @lab.test("flat", "flat")
    def flat(t: TestContext) -> None:
        t.allclose("contiguous", t.call("flat", tensor_from(x)).value, 2 * x, atol=0)
        t.views("views", "flat", tensor_from(x), expected=2 * x, atol=0)

    @lab.test("right", "right")
    def right(t: TestContext) -> None:
        t.views("views", "right", tensor_from(x), expected=2 * x, atol=0)
        t.views("ndarray too", "right", x, expected=2 * x, atol=0)

    result = run(lab, STUDENT, tmp_path, sandbox)
    assert statuses(result) == {"flat": Status.FAIL, "right": Status.PASS}
    views_line = result.tests[0].checks[1]
    assert views_line.status is Status.FAIL
    assert "non-contiguous" in views_line.message.en  # type: ignore[union-attr]


def test_views_check_in_place_writes(tmp_path: Path, sandbox: Sandbox) -> None:
    lab = Lab("labxx", "x", "x")
    a = np.ones((2, 2), np.float32)
    b = np.arange(4, dtype=np.float32).reshape(2, 2)
    for fn in ("add_into_copy", "add_in_place", "add_flat"):

        def body(t: TestContext, fn: str = fn) -> None:
            t.views(fn, fn, a, b, expected=a + b, atol=0, inplace=0)

        body.__name__ = fn
        lab.test(fn, fn)(body)
    result = run(lab, STUDENT, tmp_path, sandbox)
    assert statuses(result) == {
        "add_into_copy": Status.FAIL,
        "add_in_place": Status.PASS,
        "add_flat": Status.FAIL,
    }


def test_raises_wants_the_builtin_and_says_what_happened(tmp_path: Path, sandbox: Sandbox) -> None:
    lab = Lab("labxx", "x", "x")

    @lab.test("hybrid", "hybrid")
    def hybrid(t: TestContext) -> None:
        t.raises("value", ValueError, "bad_input", 1)

    @lab.test("plain", "plain")
    def plain(t: TestContext) -> None:
        assert t.raises("value", ValueError, "value_error", 1)

    @lab.test("other", "other")
    def other(t: TestContext) -> None:
        t.raises("value", ValueError, "index_error", 1)

    @lab.test("returned", "returned")
    def returned(t: TestContext) -> None:
        t.raises("value", ValueError, "returns", 1)

    result = run(lab, STUDENT, tmp_path, sandbox)
    assert statuses(result) == {
        "hybrid": Status.FAIL,
        "plain": Status.PASS,
        "other": Status.FAIL,
        "returned": Status.FAIL,
    }
    assert "IndexError was raised" in result.tests[2].checks[0].message.en  # type: ignore[union-attr]
    assert "the call returned 1" in result.tests[3].checks[0].message.en  # type: ignore[union-attr]


def test_an_exception_is_error_wherever_it_happens(tmp_path: Path, sandbox: Sandbox) -> None:
    lab = Lab("labxx", "x", "x")

    @lab.test("returns", "returns")
    def via_returns(t: TestContext) -> None:
        t.returns("first", "raises_inside", 1)
        if call := t.returns("second", "returns", 2):
            t.equal("second", call.value, 2)

    @lab.test("call", "call")
    def via_call(t: TestContext) -> None:
        t.call("raises_inside", 1)

    result = run(lab, STUDENT, tmp_path, sandbox)
    assert statuses(result) == {"via_returns": Status.ERROR, "via_call": Status.ERROR}
    first, second = result.tests[0].checks
    assert first.status is Status.ERROR and second.status is Status.PASS
    assert "KeyError" in first.message.en  # type: ignore[union-attr]


def test_in_place_functions_get_their_own_unchanged_message() -> None:
    t = TestContext(session=None)  # type: ignore[arg-type]
    t.unchanged("mask", np.zeros(2), np.ones(2), returns_new=False)
    t.unchanged("input", np.zeros(2), np.ones(2))
    in_place, pure = (c.message.en for c in t.checks)  # type: ignore[union-attr]
    assert "return a new result" not in in_place and "in place" in in_place
    assert "compute on a copy and return a new result" in pure and "Tensor" not in pure


def test_state_setup_and_teardown(tmp_path: Path, sandbox: Sandbox) -> None:
    lab = Lab("labxx", "x", "x")
    seen: list[str] = []

    @lab.test("make", "make")
    def make(t: TestContext) -> int:
        t.equal("x", t.call("returns", 41).value, 41)
        return 41

    @lab.test(
        "use",
        "use",
        requires=[make],
        setup=lambda t: seen.append("setup"),
        teardown=lambda t: seen.append("teardown"),
    )
    def use(t: TestContext) -> None:
        seen.append("body")
        t.equal("got it", t.result_of(make) + 1, 42)
        t.call("raises_inside", 1)  # ends the test early: teardown still runs

    result = run(lab, STUDENT, tmp_path, sandbox)
    assert statuses(result) == {"make": Status.PASS, "use": Status.ERROR}
    assert seen == ["setup", "body", "teardown"]


def test_result_of_only_reads_prerequisites() -> None:
    t = TestContext(session=None, prior={"a": 1})  # type: ignore[arg-type]
    assert t.result_of("a") == 1
    with pytest.raises(KeyError, match="not a prerequisite"):
        t.result_of("b")


def test_points_and_forbid_are_validated() -> None:
    lab = Lab("labxx", "x", "x")
    with pytest.raises(ValueError, match="points"):
        lab.test("x", "x", points=-1)
    with pytest.raises(ValueError, match=r"framework\.module:name"):
        lab.forbid("softmax", "numpy:exp", why="no")
    lab.forbid("softmax", "framework.math_ops:softmax", why=("自己写", "write it yourself"))
    assert lab.forbidden["softmax"].targets == ("framework.math_ops:softmax",)


def test_hints_appear_under_failing_checks_only(tmp_path: Path, sandbox: Sandbox) -> None:
    from grader.render.lab import render_json, render_plain

    lab = Lab("labxx", "x", "x")

    @lab.test("x", "x", hint=("测试的提示", "the test's hint"))
    def hinted(t: TestContext) -> None:
        value = t.call("returns", 3).value
        t.equal("passes", value, 3, hint=("不该出现", "never shown"))
        t.equal(
            "own hints",
            value,
            4,
            hint=[("先看看返回值", "look at the return value"), ("应当是 4", "it should be 4")],
        )
        t.equal("test hint", value, 5)

    result = run(lab, STUDENT, tmp_path, sandbox)
    passes, own, inherited = result.tests[0].checks
    assert passes.hints == []
    # a check's own levels come first, then the test's (the next step when they run out)
    assert [h.en for h in own.hints] == [
        "look at the return value",
        "it should be 4",
        "the test's hint",
    ]
    assert [h.en for h in inherited.hints] == ["the test's hint"]
    text = render_plain(result, "en")
    assert "hint: look at the return value (2 more: make hint T=1)" in text
    assert "never shown" not in text and "it should be 4" not in text
    checks = render_json(result, "zh")["tests"][0]["checks"]
    assert checks[1]["hints"] == ["先看看返回值", "应当是 4", "测试的提示"]


def test_views_compare_a_scalar_result(tmp_path: Path, sandbox: Sandbox) -> None:
    source = STUDENT + (
        "\n\ndef total(x):\n    return float(as_tensor(x).numpy().sum())\n"
        "\n\ndef total_flat(x):\n    t = as_tensor(x)\n    return float(t.data[: t.size].sum())\n"
    )
    lab = Lab("labxx", "x", "x")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    @lab.test("right", "right")
    def right(t: TestContext) -> None:
        t.views("sum", "total", x, expected=15.0, atol=0)

    @lab.test("flat", "flat")
    def flat(t: TestContext) -> None:
        t.views("sum", "total_flat", x, expected=15.0, atol=0)

    result = run(lab, source, tmp_path, sandbox)
    assert statuses(result) == {"right": Status.PASS, "flat": Status.FAIL}


def test_a_module_that_does_not_import_keeps_points_and_hidden(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    lab = Lab("labxx", "x", "x")

    @lab.test("x", "x", points=3, hidden=True)
    def weighted(t: TestContext) -> None:
        t.call("returns", 1)

    result = run(lab, "def broken(:\n", tmp_path, sandbox)
    (test,) = result.tests
    assert test.status is Status.ERROR and test.points == 3 and test.hidden is True
    assert result.max_score == 3 and result.score == 0


def test_a_sweep_without_arguments_still_names_the_input(tmp_path: Path, sandbox: Sandbox) -> None:
    from grader.codec import Seeded

    source = STUDENT + (
        "\n\ndef pick(x, rng):\n"
        "    if rng.random() > 0.9:\n        raise ValueError('unlucky')\n"
        "    return int(rng.integers(0, 10))\n"
    )

    def pick(i: int) -> int | None:  # what the student's pick does with default_rng([5, i])
        g = np.random.default_rng([5, i])
        return None if g.random() > 0.9 else int(g.integers(0, 10))

    lucky = [i for i in range(200) if pick(i) is not None][:50]
    first_unlucky = next(i for i in range(200) if pick(i) is None)
    lab = Lab("labxx", "x", "x")
    x = tensor_from(np.zeros(2, np.float32))
    seen: list[object] = []

    @lab.test("sweep", "sweep")
    def sweep(t: TestContext) -> None:
        got = t.map("pick", [(x, Seeded((5, i))) for i in lucky], return_args=False)
        seen.extend([c.args for c in got])
        t.equal(("draws", "draws"), [c.value for c in got], [pick(i) for i in lucky])

    @lab.test("unlucky", "unlucky")
    def unlucky(t: TestContext) -> None:
        t.map("pick", [(x, Seeded((5, i))) for i in range(200)], return_args=False)

    @lab.test("seeded", "seeded")
    def seeded(t: TestContext) -> None:
        got = t.map_seeded("pick", (x,), (5,), first_unlucky)
        t.equal(("draws", "draws"), [c.value for c in got], [pick(i) for i in range(len(got))])
        t.map_seeded("pick", (x,), (5,), 200)

    result = run(lab, source, tmp_path, sandbox)
    assert statuses(result) == {
        "sweep": Status.PASS,
        "unlucky": Status.ERROR,
        "seeded": Status.ERROR,
    }
    assert seen == [[]] * 50
    for test in result.tests[1:]:  # the same line for the same failed call, either way
        assert test.checks[0].status is Status.PASS or test.id == "unlucky"
        line = test.checks[-1].name.en
        assert f"(input Tensor[2], default_rng([5, {first_unlucky}]))" in line


def test_a_timeout_shows_the_tests_hint(tmp_path: Path, sandbox: Sandbox) -> None:
    lab = Lab("labxx", "x", "x")

    @lab.test("x", "x", hint=("循环要有出口", "the loop needs a way out"), timeout=0.5)
    def loops(t: TestContext) -> None:
        t.call("spins", 1)

    source = STUDENT + "\n\ndef spins(x):\n    while True:\n        pass\n"
    result = run(lab, source, tmp_path, sandbox)
    (test,) = result.tests
    assert test.status is Status.TIMEOUT
    assert [h.en for h in test.checks[-1].hints] == ["the loop needs a way out"]
