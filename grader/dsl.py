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
This module records the lines; the comparisons and their messages are in `grader.compare`,
the wording of a call that did not return in `grader.explain`. A lab imports this module
alone: `Build`, `Handle` and `Seeded` (values a check sends into the sandbox) are here too.

What a lab can also say:
- `@lab.test(..., timeout=, output=, points=, hidden=, setup=, teardown=)`: per-test call
  timeout (s) and output cap (bytes), grading weight and visibility, and functions run
  before and after the test body (`setup(t)`, `teardown(t)`; teardown runs even when the
  test ends early). A test may `return` a value; a test that `requires` it reads the value
  with `t.result_of(test)`.
- `lab.forbid(fn, "framework.module:qualname", ..., why=(zh, en))`: while the student's
  `fn` runs, calling one of those framework functions (however it was imported) fails the
  check that made the call, naming the function and saying why.
- `t.array(name, value, shape)` / `t.number(name, value)`: a returned value as an array or
  a number, or a FAIL that says what came back instead; `t.views(name, fn, *args,
  expected=...)`: the same call on equal non-contiguous views (see `grader.views`).
- `hint=` on any assertion (or on `@lab.test` for all its checks): one `(zh, en)` hint, or
  a list of them from a nudge to the concrete next step. The report shows the first under
  a failing check; `minillm hint LAB` shows the rest on demand. Never the solution code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar, cast

import numpy as np

from framework.tensor import Tensor
from grader import compare as cmp
from grader.codec import Build, Handle, Seeded
from grader.diagnose import evidence_of
from grader.explain import abort_line, brief, call_error, forbidden_line, seed_note, skip_line
from grader.i18n import Text, as_text, tr
from grader.results import CheckResult, Status
from grader.sandbox.outcome import CallOutcome, Outcome
from grader.sandbox.session import Session
from grader.spec import Call, Forbidden, HintArg, Lab, Name, Raised, TestFn, TestSpec, hint_levels
from grader.views import strided

__all__ = [
    "Build",
    "Call",
    "Forbidden",
    "Handle",
    "Lab",
    "Name",
    "Raised",
    "Seeded",
    "TestContext",
    "TestFn",
    "TestSpec",
    "hint_levels",
    "tr",
]

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

    @_hinted
    def returns(self, name: Name, fn: str, *args: Any, hint: HintArg = None) -> Call | None:
        """Call `fn`; if it raises, record check `name` as FAIL and return None.

        For checks that should each stand alone (one function failing does not hide the
        next): on success the caller records `name` itself, usually with the value. A TODO,
        timeout or crash still ends the test as with `call`.
        """
        out = self.attempt(fn, *args)
        if self._failed(name, fn, out, args):
            return None
        return self._returned(fn, out, args)

    def _failed(self, name: Name, fn: str, out: CallOutcome, args: Sequence[Any]) -> bool:
        """Record check `name` for a call that raised or called a forbidden function."""
        if out.kind is Outcome.EXCEPTION:
            self._record(name, Status.ERROR, call_error(fn, out, args))
        elif out.kind is Outcome.FORBIDDEN:  # the check's name, the forbidden line's hint
            line = forbidden_line(fn, out, self._why(fn))
            line.name = as_text(name)
            self.checks.append(line)
        return out.kind in (Outcome.EXCEPTION, Outcome.FORBIDDEN)

    def _stop(self, name: str, out: CallOutcome, args: Sequence[Any] | None) -> NoReturn:
        """End the test with the line of a call that did not return."""
        if out.kind is Outcome.FORBIDDEN:
            raise Abort(Status.FAIL, forbidden_line(name, out, self._why(name)))
        raise Abort(*abort_line(name, out, args))

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

    def unless_raised(self, name: str, out: CallOutcome) -> None:
        """End the test as a call of `name` would, unless `out` returned or raised."""
        self._saw(out)
        if not out.ok and out.kind is not Outcome.EXCEPTION:
            self._stop(name, out, ())

    def skip_for(self, test: Callable[..., Any] | str) -> NoReturn:
        """End this test as SKIP: it needs a usable result of `test`, which is not yet."""
        tid = test if isinstance(test, str) else test.__name__
        ids = [s.id for s in self.lab.tests] if self.lab else []
        raise Abort(Status.SKIP, skip_line(ids.index(tid) + 1 if tid in ids else None, tid))

    def _returned(self, name: str, out: CallOutcome, args: Sequence[Any]) -> Call:
        """The `Call` of an outcome that returned; otherwise end the test with its line."""
        self._saw(out)
        if not out.ok:
            self._stop(name, out, args)
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
        thousands of calls that judge only the values. A `Seeded` argument is a
        generator the sandbox builds from its seed.
        """
        limits = self._limits(name, timeout)
        out = self.session.map(name, list(calls), return_args=return_args, **limits)
        values = self._mapped(name, out, lambda i: calls[i] if i < len(calls) else None)
        if not return_args:
            after: list[Any] = [[] for _ in values]
        else:
            after = out.args if len(out.args) == len(values) else [list(c) for c in calls]
        return [
            Call(name, v, list(a), {}, out.output, out.seconds / max(len(values), 1))
            for v, a in zip(values, after, strict=True)
        ]

    def map_seeded(
        self,
        name: str,
        args: tuple[Any, ...],
        seed: tuple[int, ...],
        n: int,
        timeout: float | None = None,
    ) -> list[Call]:
        """`map` of ``name(*args, Seeded((*seed, i)))`` for i < n, ``return_args=False``: the
        same values and report, but the arguments are sent once and the sandbox builds
        each generator, so a sweep of thousands of draws costs no encoding per call."""
        out = self.session.map_seeded(name, args, seed, n, **self._limits(name, timeout))
        values = self._mapped(name, out, lambda i: (*args, Seeded((*seed, i))) if i < n else None)
        return [
            Call(name, v, [], {}, out.output, out.seconds / max(len(values), 1)) for v in values
        ]

    def _mapped(
        self, name: str, out: CallOutcome, call: Callable[[int], tuple[Any, ...] | None]
    ) -> list[Any]:
        """The values of a sweep that returned; otherwise end the test, naming the input
        (`call` gives the arguments of the i-th call) of the call that did not return."""
        self._saw(out)
        if out.kind is Outcome.FORBIDDEN:
            self._stop(name, out, None)
        if not out.ok:
            status, line = abort_line(name, out)
            index = out.error.index
            failed = call(index) if status is not Status.TODO and index is not None else None
            if failed is not None:
                args = ", ".join(brief(a) for a in failed)
                line.name = line.name + tr(f"（输入 {args}）", f" (input {args})")
            raise Abort(status, line)
        return out.value if isinstance(out.value, list) else []

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
            self._stop(target, out, None)
        return out.value

    def getattr(self, handle: Handle, name: str) -> Any:
        """Read an attribute of an object in the sandbox (plain data, or another handle)."""
        out = self.session.getattr(handle, name, timeout=self.timeout)
        self._saw(out)
        if not out.ok:
            self._stop(name, out, None)
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
        arr, why = cmp.as_array(value, shape)
        if arr is None:
            self.check(name, False, why)
        return arr

    @_hinted
    def number(self, name: Name, value: Any, *, hint: HintArg = None) -> float | None:
        """`value` (an int, float, numpy scalar or one-element array) as a float, or None.

        Records a FAIL line `name` when it is anything else (a str, None, a bool, a list).
        """
        number, why = cmp.as_number(value)
        if number is None:
            self.check(name, False, why)
        return number

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
        ok, msg = cmp.compare_close(actual, float(expected), atol=atol, rtol=rtol)
        self._record(name, Status.PASS if ok else Status.FAIL, msg, (actual, atol, rtol, expected))
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
        ok, msg = cmp.compare_allclose(actual, expected, atol=atol, rtol=rtol)
        self._record(name, Status.PASS if ok else Status.FAIL, msg, (actual, atol, rtol, expected))
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
        if self._failed(name, fn, out, viewed):
            return False
        call = self._returned(fn, out, viewed)
        value = call.value
        if inplace is not None:
            value = call.args[inplace] if inplace < len(call.args) else None
        ok, msg = cmp.compare_view(
            value, expected, atol=atol, rtol=rtol, inplace=inplace is not None
        )
        self._record(name, Status.PASS if ok else Status.FAIL, msg, (value, atol, rtol, expected))
        return ok

    @_hinted
    def equal(self, name: Name, actual: Any, expected: Any, *, hint: HintArg = None) -> bool:
        """Exact equality of plain values, types included (True is not 1)."""
        ok, msg = cmp.compare_equal(actual, expected)
        self._record(name, Status.PASS if ok else Status.FAIL, msg, (actual, 0.0, 0.0, expected))
        return ok

    @_hinted
    def shape(
        self, name: Name, actual: Any, expected: Sequence[int], *, hint: HintArg = None
    ) -> bool:
        """A Tensor or array whose shape is exactly `expected`."""
        return self.check(name, *cmp.compare_shape(actual, expected))

    @_hinted
    def unchanged(
        self, name: Name, before: Any, after: Any, *, returns_new: bool = True, hint: HintArg = None
    ) -> bool:
        """`after` is bit-for-bit the same array as `before` (an input left untouched).

        `returns_new=False` for an argument of an in-place function that must stay as it
        was (the mask of `apply_mask`): the message then does not suggest returning a copy.
        """
        return self.check(name, *cmp.compare_unchanged(before, after, returns_new))

    @_hinted
    def finite(self, name: Name, actual: Any, *, hint: HintArg = None) -> bool:
        """Every element is finite (no NaN, no ±inf)."""
        return self.check(name, *cmp.compare_finite(actual))

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
        out = self.attempt(fn, *args, **kwargs)
        if out.kind is Outcome.EXCEPTION:
            ok, why = cmp.compare_raised(out.error, exc.__name__)
            self.check(name, ok, why)
            return Raised(ok, out.args)
        if out.ok:
            self.check(name, False, cmp.returned_instead(exc.__name__, out.value))
            return Raised(False, out.args)
        self._stop(fn, out, args)

    def _record(self, name: Name, status: Status, message: Text | None, seen: Any = None) -> None:
        """Append a line; `seen` is (value, atol, rtol, expected) of a value check."""
        own, general = hint_levels(self._hint), hint_levels(self.hint)  # then the test's
        hints = own + [h for h in general if h not in own]
        bad = status is not Status.PASS
        evidence = evidence_of(seen, message, bool(self.seeds)) if bad else None
        if bad and self.seeds and message is not None:
            message = message + seed_note(self.seeds, self.run_seed, self.lab)
        shown = bad and self.last_output.strip()
        self.checks.append(
            CheckResult(
                as_text(name),
                status,
                message,
                self.last_output if shown else "",
                self.last_output_bytes if shown else 0,
                hints if bad else [],
                evidence=evidence,
            )
        )


def _floaty(a: Tensor | np.ndarray) -> bool:
    return isinstance(a, Tensor) or a.dtype.kind == "f"
