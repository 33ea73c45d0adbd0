"""The check language that every `labs/labNN/verify.py` is written in.

A lab is a `Lab` with ordered tests; a test is a function that receives a `TestContext`
(`t`). Inside it, `t.call(...)` runs a student function in the sandbox and returns plain
data; `t.close`, `t.allclose`, `t.equal`, `t.check`, `t.raises`, ... each record one
assertion line of the report. Checks never stop the test; a call that does not return
(TODO, exception, timeout, crash, output flood) ends the test with that status.

    lab = Lab("lab04", "多头自注意力", "Multi-head self-attention")

    @lab.test("单位矩阵的分数", "scores of identity inputs")
    def identity(t):
        q = np.eye(2, dtype=np.float32)
        out = t.call("attention_scores", q, q, 0.5).value
        t.allclose(("值为 0.5·I", "values are 0.5·I"), out, 0.5 * q, atol=1e-6)  # exact in fp32

Names and messages are bilingual: a `(zh, en)` tuple, a `Text`, or one string for both.

What a lab can also say:
- `@lab.test(..., timeout=, output=, points=, hidden=, setup=, teardown=)`: per-test call
  timeout (s) and output cap (bytes), grading weight and visibility, and functions run
  before and after the test body (`setup(t)`, `teardown(t)`; teardown runs even when the
  test ends early). A test may `return` a value; a test that `requires` it reads the value
  with `t.result_of(test)`.
- `lab.forbid(fn, "framework.module:qualname", ..., why=(zh, en))`: while the student's
  `fn` runs, calling one of those framework functions (however it was imported) fails the
  check that made the call, naming the function and saying why.
- `t.array(name, value, shape)` / `t.number(name, value)`: turn what a student function
  returned into an array or a number, or record a FAIL that says what came back instead.
- `t.views(name, fn, *args, expected=...)`: the same call with every Tensor or ndarray
  argument replaced by an equal non-contiguous view (see `grader.views`).
- `hint=` on any assertion (or on `@lab.test` for all its checks): one `(zh, en)` hint, or
  a list of them from a nudge to the concrete next step. The report shows the first under
  a failing check; `minillm hint LAB` shows the rest on demand. Never the solution code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np

from framework.tensor import Tensor
from grader.codec import Build, Handle
from grader.compare import compare_allclose, compare_close, describe, fmt, to_array
from grader.explain import abort_line, brief, call_error, forbidden_line
from grader.i18n import Text, as_text, tr
from grader.results import CheckResult, Status
from grader.sandbox.session import CallOutcome, Session
from grader.views import outside, strided

__all__ = ["Call", "Lab", "Raised", "TestContext", "TestSpec", "hint_levels", "tr"]

Name = Text | str | tuple[str, str]
TestFn = Callable[["TestContext"], Any]
HintArg = Name | Sequence[Name] | None  # one hint, or several from a nudge to the next step
_M = TypeVar("_M", bound=Callable[..., Any])


def _hinted(method: _M) -> _M:
    """Make the `hint=` of an assertion apply to the lines it records (the outermost wins)."""

    @functools.wraps(method)
    def wrapper(self: TestContext, *args: Any, hint: HintArg = None, **kwargs: Any) -> Any:
        if self._hint is not None or hint is None:
            return method(self, *args, **kwargs)
        self._hint = hint
        try:
            return method(self, *args, **kwargs)
        finally:
            self._hint = None

    return cast(_M, wrapper)


def hint_levels(arg: HintArg) -> list[Text]:
    """A hint argument as a list of levels."""
    if arg is None:
        return []
    if isinstance(arg, Text | str) or (
        isinstance(arg, tuple) and len(arg) == 2 and all(isinstance(a, str) for a in arg)
    ):
        return [as_text(arg)]  # type: ignore[arg-type]
    return [as_text(a) for a in arg]


@dataclass
class TestSpec:
    """A registered test: its function, id, title, prerequisites and call timeout."""

    __test__ = False  # not a pytest class

    fn: TestFn
    id: str
    title: Text
    requires: tuple[str, ...] = ()
    timeout: float | None = None
    output: int | None = None
    points: float = 1.0
    hidden: bool = False
    setup: TestFn | None = None
    teardown: TestFn | None = None
    hint: HintArg = None


@dataclass(frozen=True)
class Forbidden:
    """Framework functions a student function must not call, and why."""

    targets: tuple[str, ...]
    why: Text


class Lab:
    """The tests of one lab, in the order they are declared."""

    def __init__(self, lab_id: str, title_zh: str, title_en: str) -> None:
        self.id = lab_id
        self.title = Text(title_zh, title_en)
        self.tests: list[TestSpec] = []
        self.forbidden: dict[str, Forbidden] = {}

    def test(
        self,
        title_zh: str,
        title_en: str,
        *,
        requires: Sequence[Callable[..., Any] | str] = (),
        timeout: float | None = None,
        output: int | None = None,
        points: float = 1.0,
        hidden: bool = False,
        setup: TestFn | None = None,
        teardown: TestFn | None = None,
        hint: HintArg = None,
    ) -> Callable[[TestFn], TestFn]:
        """Register a test. `requires`: tests (functions or ids) that must PASS first.

        `hint` is shown under every failing check of the test that has no hint of its own.
        """
        if points < 0:
            raise ValueError(f"{self.id}: points must be >= 0, got {points}")

        def register(fn: TestFn) -> TestFn:
            if any(s.id == fn.__name__ for s in self.tests):
                raise ValueError(f"{self.id}: duplicate test id {fn.__name__!r}")
            reqs = tuple(r if isinstance(r, str) else r.__name__ for r in requires)
            known = {s.id for s in self.tests}
            for r in reqs:
                if r not in known:
                    raise ValueError(f"{self.id}: test {fn.__name__!r} requires unknown {r!r}")
            title = Text(title_zh, title_en)
            self.tests.append(
                TestSpec(fn, fn.__name__, title, reqs, timeout, output, points, hidden)
            )
            self.tests[-1].setup, self.tests[-1].teardown = setup, teardown
            self.tests[-1].hint = hint
            return fn

        return register

    def forbid(self, student_fn: str, *targets: str, why: Name) -> None:
        """While `student_fn` runs, calling any of `targets` ("module:qualname") fails.

        For TODOs that have a framework twin: a `softmax` that returns
        `framework.math_ops.softmax(x)` is not the exercise.
        """
        for target in targets:
            module, _, qualname = target.partition(":")
            if not module.startswith("framework") or not qualname:
                raise ValueError(f"{self.id}: forbid needs 'framework.module:name', not {target!r}")
        old = self.forbidden.get(student_fn)
        self.forbidden[student_fn] = Forbidden(
            (old.targets if old else ()) + tuple(targets), as_text(why)
        )


@dataclass
class Call:
    """A student call that returned: its value and its arguments as they were afterwards."""

    name: str
    value: Any
    args: list[Any]
    kwargs: dict[str, Any]
    output: str
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class Raised:
    """What `t.raises` saw: true when the expected exception was raised.

    `args` are the arguments as they were after the call (check "unchanged on error").
    """

    ok: bool
    args: list[Any] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.ok


class Abort(Exception):
    """Ends a test early with `status`; carries the line that explains why."""

    def __init__(self, status: Status, line: CheckResult) -> None:
        super().__init__(line.name.en)
        self.status = status
        self.line = line


@dataclass
class TestContext:
    """What a test function gets as `t`."""

    __test__ = False  # not a pytest class

    session: Session
    timeout: float | None = None
    checks: list[CheckResult] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    last_output: str = ""
    last_output_bytes: int = 0
    lab: Lab | None = None
    output: int | None = None
    prior: dict[str, Any] = field(default_factory=dict)
    hint: HintArg = None  # the test's hint, for checks that have none of their own
    run_seed: int | None = None  # `minillm grade`'s per-submission seed (`verify --seed`)
    _hint: HintArg = field(default=None, repr=False)  # the hint of the check being recorded

    # -- calling student code -------------------------------------------------------------
    def _limits(self, name: str, timeout: float | None) -> dict[str, Any]:
        extra: dict[str, Any] = {"timeout": timeout or self.timeout}
        forbidden = self.lab.forbidden.get(name) if self.lab is not None else None
        if forbidden is not None:
            extra["forbid"] = forbidden.targets
        if self.output is not None:
            extra["output"] = self.output
        return extra

    def attempt(
        self, name: str, *args: Any, timeout: float | None = None, **kwargs: Any
    ) -> CallOutcome:
        """Call a student function and return the raw outcome, whatever happened."""
        out = self.session.call(name, *args, **self._limits(name, timeout), **kwargs)
        self._saw(out)
        return out

    def _saw(self, out: CallOutcome) -> None:
        self.last_output = out.output
        self.last_output_bytes = out.output_bytes

    def _why(self, name: str) -> Text | None:
        forbidden = self.lab.forbidden.get(name) if self.lab is not None else None
        return forbidden.why if forbidden is not None else None

    def result_of(self, test: Callable[..., Any] | str) -> Any:
        """The value a prerequisite test returned (it must be listed in `requires`)."""
        key = test if isinstance(test, str) else test.__name__
        if key not in self.prior:
            raise KeyError(f"result_of({key!r}): not a prerequisite of this test")
        return self.prior[key]

    def returns(self, name: Name, fn: str, *args: Any) -> Call | None:
        """Call `fn`; if it raises, record check `name` as FAIL and return None.

        For checks that should each stand alone (one function failing does not hide the
        next): on success the caller records `name` itself, usually with the value. A TODO,
        timeout or crash still ends the test as with `call`.
        """
        out = self.attempt(fn, *args)
        if out.kind == "exception":
            self._record(name, Status.ERROR, call_error(fn, out, args))
            return None
        if out.kind == "forbidden":
            self._record(name, Status.FAIL, forbidden_line(fn, out, self._why(fn)).message)
            return None
        return self._returned(fn, out, args)

    def call_counting(self, count: Sequence[str], name: str, *args: Any) -> Call:
        """Like `call`, and count how often the student functions `count` ran during it.

        The counts are in `Call.counts`: a check can then require that `roundtrip` really
        calls the student's own `decode_id`, not merely returns its input.
        """
        out = self.session.call(name, *args, count=tuple(count), **self._limits(name, None))
        return self._returned(name, out, args)

    def call(self, name: str, *args: Any, timeout: float | None = None, **kwargs: Any) -> Call:
        """Call a student function; end the test unless it returns normally."""
        return self._returned(name, self.attempt(name, *args, timeout=timeout, **kwargs), args)

    def _returned(self, name: str, out: CallOutcome, args: Sequence[Any]) -> Call:
        """The `Call` of an outcome that returned; otherwise end the test with its line."""
        self._saw(out)
        if out.kind == "forbidden":
            raise Abort(Status.FAIL, forbidden_line(name, out, self._why(name)))
        if not out.ok:
            raise Abort(*abort_line(name, out, args))
        return Call(name, out.value, out.args, out.kwargs, out.output, out.seconds, out.counts)

    def map(
        self,
        name: str,
        calls: Sequence[tuple[Any, ...]],
        timeout: float | None = None,
        *,
        return_args: bool = True,
    ) -> list[Call]:
        """Call a student function once per argument tuple, in a single sandbox round trip.

        Returns one `Call` per tuple (its value, and its arguments as they were after all
        the calls: Tensors passed in several tuples share their storage, and the same Tensor
        object in several tuples is one object in the sandbox, so a sweep of in-place writes
        accumulates). Ends the test like `call` if any call does not return; the report
        names the input. Use it for sweeps such as all 256 bytes. With `return_args=False`
        the arguments are not sent back and every `Call.args` is empty: for sweeps of
        thousands of calls that judge only the values. A `codec.Seeded` argument is a
        generator the sandbox builds from its seed.
        """
        limits = self._limits(name, timeout)
        out = self.session.map(name, list(calls), return_args=return_args, **limits)
        self._saw(out)
        if out.kind == "forbidden":
            raise Abort(Status.FAIL, forbidden_line(name, out, self._why(name)))
        if not out.ok:
            status, line = abort_line(name, out)
            index = (out.exc or {}).get("index")
            if status is not Status.TODO and isinstance(index, int) and index < len(calls):
                args = ", ".join(brief(a) for a in calls[index])
                line.name = line.name + tr(f"（输入 {args}）", f" (input {args})")
            raise Abort(status, line)
        values = out.value if isinstance(out.value, list) else []
        if not return_args:
            after: list[Any] = [[] for _ in values]
        else:
            after = out.args if len(out.args) == len(values) else [list(c) for c in calls]
        return [
            Call(name, v, list(a), {}, out.output, out.seconds / max(len(values), 1))
            for v, a in zip(values, after, strict=True)
        ]

    def method(self, handle: Handle, name: str, *args: Any, **kwargs: Any) -> Call:
        """Call method `name` of an object that lives in the sandbox."""
        out = self.session.call(name, *args, target=handle, **self._limits("", None), **kwargs)
        return self._returned(name, out, args)

    def build(
        self, target: str, *args: Any, attrs: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        """Construct framework object `target` ("framework.module:Name") in the sandbox."""
        out = self.session.build(Build(target, args, kwargs, attrs), timeout=self.timeout)
        self._saw(out)
        if not out.ok:
            raise Abort(*abort_line(target, out))
        return out.value

    def getattr(self, handle: Handle, name: str) -> Any:
        """Read an attribute of an object in the sandbox (plain data, or another handle)."""
        out = self.session.getattr(handle, name, timeout=self.timeout)
        self._saw(out)
        if not out.ok:
            raise Abort(*abort_line(name, out))
        return out.value

    def entropy(self, seed: int) -> tuple[int, ...]:
        """The entropy of the generator for a check's fixed `seed` in this run: ``(seed,)``,
        or ``(run_seed, seed)`` when the run has a seed of its own (`minillm grade` draws
        one per submission, so memorising the public checks' inputs earns nothing;
        ``minillm verify --seed S`` draws the same inputs again). Failures print it."""
        if seed not in self.seeds:
            self.seeds.append(seed)
        return (seed,) if self.run_seed is None else (self.run_seed, seed)

    def rng(self, seed: int) -> np.random.Generator:
        """A seeded generator (see `entropy`); failures in this test print the seed."""
        return np.random.default_rng(list(self.entropy(seed)))

    # -- assertions -----------------------------------------------------------------------
    @_hinted
    def check(
        self, name: Name, ok: bool, detail: Name | None = None, *, hint: HintArg = None
    ) -> bool:
        """Record a check that passes when `ok` is true; `detail` explains a failure."""
        message = None if ok or detail is None else as_text(detail)
        self._record(name, Status.PASS if ok else Status.FAIL, message)
        return bool(ok)

    @_hinted
    def array(
        self, name: Name, value: Any, shape: Sequence[int] | None = None, *, hint: HintArg = None
    ) -> np.ndarray | None:
        """`value` (a Tensor, ndarray or list of numbers) as a float64 array, or None.

        Records nothing when it works. Records a FAIL line `name` that says what came back
        instead when `value` is not numeric or its shape is not `shape`.
        """
        arr = to_array(value)
        want = "" if shape is None else f" {list(shape)}"
        if arr is None:
            self.check(
                name,
                False,
                tr(
                    f"期望形状为{want or '任意'}的 Tensor 或 ndarray，实际得到 {describe(value)}",
                    f"expected a Tensor or ndarray{' of shape' + want if want else ''}, "
                    f"got {describe(value)}: {fmt(value)}",
                ),
            )
            return None
        if shape is not None and list(arr.shape) != list(shape):
            self.check(
                name,
                False,
                tr(
                    f"形状不对：期望 {list(shape)}，实际 {list(arr.shape)}",
                    f"wrong shape: expected {list(shape)}, got {list(arr.shape)}",
                ),
            )
            return None
        return arr

    @_hinted
    def number(self, name: Name, value: Any, *, hint: HintArg = None) -> float | None:
        """`value` (an int, float, numpy scalar or one-element array) as a float, or None.

        Records a FAIL line `name` when it is anything else (a str, None, a bool, a list).
        """
        if isinstance(value, np.ndarray | Tensor):
            arr = to_array(value)
            if arr is not None and arr.size == 1:
                return float(arr.reshape(()))
        elif isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool | np.bool_
        ):
            return float(value)
        self.check(
            name,
            False,
            tr(
                f"期望一个数，实际得到 {describe(value)}: {fmt(value)}",
                f"expected a number, got {describe(value)}: {fmt(value)}",
            ),
        )
        return None

    @_hinted
    def close(
        self,
        name: Name,
        actual: Any,
        expected: float,
        *,
        atol: float,
        rtol: float = 0.0,
        hint: HintArg = None,
    ) -> bool:
        """A scalar within atol + rtol·|expected| of `expected` (NaN fails)."""
        ok, msg = compare_close(actual, float(expected), atol=atol, rtol=rtol)
        self._record(name, Status.PASS if ok else Status.FAIL, msg)
        return ok

    @_hinted
    def allclose(
        self,
        name: Name,
        actual: Any,
        expected: Any,
        *,
        atol: float,
        rtol: float = 0.0,
        hint: HintArg = None,
    ) -> bool:
        """An array of the expected shape, every cell within tolerance (NaN fails)."""
        ok, msg = compare_allclose(actual, expected, atol=atol, rtol=rtol)
        self._record(name, Status.PASS if ok else Status.FAIL, msg)
        return ok

    @_hinted
    def views(
        self,
        name: Name,
        fn: str,
        *args: Any,
        expected: Any,
        atol: float,
        rtol: float = 0.0,
        inplace: int | None = None,
        hint: HintArg = None,
    ) -> bool:
        """Call `fn` with every Tensor/ndarray argument as an equal non-contiguous view.

        Compares the returned value (or, with `inplace=i`, argument i after the call) with
        `expected`; for an in-place call, the storage cells outside the view must be left
        alone too. A function that reads `data` as if it were row-major fails here.
        """
        viewed = [
            strided(a) if isinstance(a, Tensor | np.ndarray) and _floaty(a) else a for a in args
        ]
        out = self.attempt(fn, *viewed)
        if out.kind == "exception":
            self._record(name, Status.ERROR, call_error(fn, out, viewed))
            return False
        if out.kind == "forbidden":
            self._record(name, Status.FAIL, forbidden_line(fn, out, self._why(fn)).message)
            return False
        call = self._returned(fn, out, viewed)
        hint = tr(
            "\n（输入是非连续的视图：按 strides 和 offset 读写元素，例如用 x.numpy()）",
            "\n(the inputs were non-contiguous views: read and write elements through "
            "strides and offset, e.g. with x.numpy())",
        )
        value = call.value
        if inplace is not None:
            value = call.args[inplace] if inplace < len(call.args) else None
        if isinstance(expected, int | float | np.integer | np.floating):  # a scalar result
            ok, msg = compare_close(value, float(expected), atol=atol, rtol=rtol)
        else:
            ok, msg = compare_allclose(value, expected, atol=atol, rtol=rtol)
        if ok and inplace is not None and isinstance(value, Tensor):
            spill = outside(value)
            if not np.isnan(spill).all():
                ok = False
                n = int((~np.isnan(spill)).sum())
                msg = tr(
                    f"写到了视图之外：存储里有 {n} 个不属于这个 Tensor 的位置被改了",
                    f"wrote outside the view: {n} storage cells that do not belong to "
                    "the tensor changed",
                )
        message = None if ok else (msg or Text("", "")) + hint
        self._record(name, Status.PASS if ok else Status.FAIL, message)
        return ok

    @_hinted
    def equal(self, name: Name, actual: Any, expected: Any, *, hint: HintArg = None) -> bool:
        """Exact equality of plain values, types included (True is not 1)."""
        ok = type(actual) is type(expected) and actual == expected
        msg = (
            None
            if ok
            else tr(
                f"期望 {fmt(expected)}，实际 {fmt(actual)}（{describe(actual)}）",
                f"expected {fmt(expected)}, got {fmt(actual)} ({describe(actual)})",
            )
        )
        self._record(name, Status.PASS if ok else Status.FAIL, msg)
        return ok

    @_hinted
    def shape(
        self, name: Name, actual: Any, expected: Sequence[int], *, hint: HintArg = None
    ) -> bool:
        """A Tensor or array whose shape is exactly `expected`."""
        arr = to_array(actual)
        exp = list(expected)
        if arr is None:
            return self.check(
                name,
                False,
                tr(
                    f"期望形状为 {exp} 的 Tensor，实际得到 {describe(actual)}",
                    f"expected a Tensor of shape {exp}, got {describe(actual)}",
                ),
            )
        return self.check(
            name,
            list(arr.shape) == exp,
            tr(
                f"期望形状 {exp}，实际 {list(arr.shape)}",
                f"expected shape {exp}, got {list(arr.shape)}",
            ),
        )

    @_hinted
    def unchanged(
        self, name: Name, before: Any, after: Any, *, returns_new: bool = True, hint: HintArg = None
    ) -> bool:
        """`after` is bit-for-bit the same array as `before` (an input left untouched).

        `returns_new=False` for an argument of an in-place function that must stay as it
        was (the mask of `apply_mask`): the message then does not suggest returning a copy.
        """
        a, b = to_array(after), to_array(before)
        ok = (
            a is not None
            and b is not None
            and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=True))
        )
        if returns_new:
            detail = tr(
                "参数被改动了：这个函数不应修改它的输入（在副本上计算，返回新的结果）",
                "an argument was modified: this function must leave its inputs unchanged "
                "(compute on a copy and return a new result)",
            )
        else:
            detail = tr(
                "这个参数被改动了：函数只应修改它该原地修改的那个参数",
                "this argument was modified: the function may change only the "
                "argument it works on in place",
            )
        return self.check(name, ok, detail)

    @_hinted
    def finite(self, name: Name, actual: Any, *, hint: HintArg = None) -> bool:
        """Every element is finite (no NaN, no ±inf)."""
        arr = to_array(actual)
        if arr is None:
            return self.check(
                name,
                False,
                tr(
                    f"期望数组，实际得到 {describe(actual)}",
                    f"expected an array, got {describe(actual)}",
                ),
            )
        bad = int((~np.isfinite(arr)).sum())
        return self.check(
            name,
            bad == 0,
            tr(
                f"{bad}/{arr.size} 个元素是 NaN 或 inf", f"{bad}/{arr.size} elements are NaN or inf"
            ),
        )

    @_hinted
    def raises(
        self,
        name: Name,
        exc: type[BaseException],
        fn: str,
        *args: Any,
        hint: HintArg = None,
        **kwargs: Any,
    ) -> Raised:
        """Calling `fn(*args)` raises `exc` (or a subclass of the builtin), with a message.

        The result is true when it did, and carries the arguments as they were afterwards.
        An exception class that poses as several builtin errors at once does not count.
        """
        from grader.explain import clean  # the student's type name and message, escaped

        out = self.attempt(fn, *args, **kwargs)
        want = exc.__name__
        if out.kind == "exception" and out.exc is not None:
            got = clean(out.exc.get("type"), limit=100, one_line=True)
            said = clean(out.exc.get("message", ""), limit=500, one_line=True)
            ok = _is_builtin_error(out.exc, want)
            self.check(
                name,
                ok,
                tr(
                    f"期望抛出 {want}，实际抛出 {got}: {said}",
                    f"expected {want}, but {got} was raised: {said}",
                ),
            )
            return Raised(ok, out.args)
        if out.ok:
            self.check(
                name,
                False,
                tr(
                    f"期望抛出 {want}，但函数正常返回了 {fmt(out.value)}",
                    f"expected {want} to be raised, but the call returned {fmt(out.value)}",
                ),
            )
            return Raised(False, out.args)
        if out.kind == "forbidden":
            raise Abort(Status.FAIL, forbidden_line(fn, out, self._why(fn)))
        raise Abort(*abort_line(fn, out, args))

    def _record(self, name: Name, status: Status, message: Text | None) -> None:
        hints = hint_levels(self._hint if self._hint is not None else self.hint)
        if status is not Status.PASS and self.seeds and message is not None:
            seeds = ", ".join(str(s) for s in self.seeds)
            if self.run_seed is None:
                message = message + tr(
                    f"\n（随机输入，seed={seeds}）", f"\n(random input, seed={seeds})"
                )
            else:
                again = (
                    f"minillm verify {self.lab.id if self.lab else 'LAB'} --seed {self.run_seed}"
                )
                message = message + tr(
                    f"\n（随机输入，seed={seeds}，本次评分的 seed={self.run_seed}：{again} "
                    "可重现）",
                    f"\n(random input, seed={seeds}, run seed {self.run_seed}: {again} "
                    "draws it again)",
                )
        failed = status is not Status.PASS and self.last_output.strip()
        self.checks.append(
            CheckResult(
                as_text(name),
                status,
                message,
                self.last_output if failed else "",
                self.last_output_bytes if failed else 0,
                hints if status is not Status.PASS else [],
            )
        )


_CONTRACT_ERRORS = ("ValueError", "TypeError", "IndexError", "KeyError")


def _is_builtin_error(exc: dict[str, Any], want: str) -> bool:
    """The child's exception is the builtin `want`, and poses as no other contract error.

    Judged from the names of the builtin classes in its MRO (`builtins` in the worker's
    report, else the whole MRO): a class the child defines and calls `ValueError` is not
    the builtin, and one that inherits ValueError, TypeError and IndexError at once would
    satisfy every "raises" check.
    """
    names = exc.get("builtins")
    if not isinstance(names, list):
        names = exc.get("mro", [exc.get("type")])
    names = [n for n in names if isinstance(n, str)]
    if want not in names:
        return False
    others = [n for n in _CONTRACT_ERRORS if n != want and n in names]
    return not others or exc.get("type") in _LIBRARY_HYBRIDS


# Library exceptions that inherit two contract errors on purpose.
_LIBRARY_HYBRIDS = frozenset({"AxisError"})  # numpy: ValueError and IndexError


def _floaty(a: Tensor | np.ndarray) -> bool:
    return isinstance(a, Tensor) or a.dtype.kind == "f"
