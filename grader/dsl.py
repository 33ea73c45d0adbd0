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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.codec import Build, Handle
from grader.compare import compare_allclose, compare_close, describe, fmt, to_array
from grader.explain import abort_line, brief, where
from grader.i18n import Text, as_text, tr
from grader.results import CheckResult, Status
from grader.sandbox.session import CallOutcome, Session

__all__ = ["Call", "Lab", "TestContext", "TestSpec", "tr"]

Name = Text | str | tuple[str, str]


@dataclass
class TestSpec:
    """A registered test: its function, id, title, prerequisites and call timeout."""

    __test__ = False  # not a pytest class

    fn: Callable[[TestContext], None]
    id: str
    title: Text
    requires: tuple[str, ...] = ()
    timeout: float | None = None


class Lab:
    """The tests of one lab, in the order they are declared."""

    def __init__(self, lab_id: str, title_zh: str, title_en: str) -> None:
        self.id = lab_id
        self.title = Text(title_zh, title_en)
        self.tests: list[TestSpec] = []

    def test(
        self,
        title_zh: str,
        title_en: str,
        *,
        requires: Sequence[Callable[..., Any] | str] = (),
        timeout: float | None = None,
    ) -> Callable[[Callable[[TestContext], None]], Callable[[TestContext], None]]:
        """Register a test. `requires`: tests (functions or ids) that must PASS first."""

        def register(fn: Callable[[TestContext], None]) -> Callable[[TestContext], None]:
            if any(s.id == fn.__name__ for s in self.tests):
                raise ValueError(f"{self.id}: duplicate test id {fn.__name__!r}")
            reqs = tuple(r if isinstance(r, str) else r.__name__ for r in requires)
            known = {s.id for s in self.tests}
            for r in reqs:
                if r not in known:
                    raise ValueError(f"{self.id}: test {fn.__name__!r} requires unknown {r!r}")
            self.tests.append(TestSpec(fn, fn.__name__, Text(title_zh, title_en), reqs, timeout))
            return fn

        return register


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

    # -- calling student code -------------------------------------------------------------
    def attempt(
        self, name: str, *args: Any, timeout: float | None = None, **kwargs: Any
    ) -> CallOutcome:
        """Call a student function and return the raw outcome, whatever happened."""
        out = self.session.call(name, *args, timeout=timeout or self.timeout, **kwargs)
        self.last_output = out.output
        return out

    def returns(self, name: Name, fn: str, *args: Any) -> Call | None:
        """Call `fn`; if it raises, record check `name` as FAIL and return None.

        For checks that should each stand alone (one function failing does not hide the
        next): on success the caller records `name` itself, usually with the value. A TODO,
        timeout or crash still ends the test as with `call`.
        """
        out = self.attempt(fn, *args)
        if out.kind != "exception":
            return self._returned(fn, out, args)
        exc = out.exc or {}
        wz, we = where(exc)
        typ, msg = exc.get("type"), exc.get("message", "")
        self.check(
            name,
            False,
            tr(f"{fn}(...) 抛出了 {typ}: {msg}{wz}", f"{fn}(...) raised {typ}: {msg}{we}"),
        )
        return None

    def call_counting(self, count: Sequence[str], name: str, *args: Any) -> Call:
        """Like `call`, and count how often the student functions `count` ran during it.

        The counts are in `Call.counts`: a check can then require that `roundtrip` really
        calls the student's own `decode_id`, not merely returns its input.
        """
        out = self.session.call(name, *args, timeout=self.timeout, count=tuple(count))
        return self._returned(name, out, args)

    def call(self, name: str, *args: Any, timeout: float | None = None, **kwargs: Any) -> Call:
        """Call a student function; end the test unless it returns normally."""
        return self._returned(name, self.attempt(name, *args, timeout=timeout, **kwargs), args)

    def _returned(self, name: str, out: CallOutcome, args: Sequence[Any]) -> Call:
        """The `Call` of an outcome that returned; otherwise end the test with its line."""
        self.last_output = out.output
        if not out.ok:
            raise Abort(*abort_line(name, out, args))
        return Call(name, out.value, out.args, out.kwargs, out.output, out.seconds, out.counts)

    def map(
        self, name: str, calls: Sequence[tuple[Any, ...]], timeout: float | None = None
    ) -> list[Call]:
        """Call a student function once per argument tuple, in a single sandbox round trip.

        Returns one `Call` per tuple (its value, and its arguments as they were after all
        the calls: Tensors passed in several tuples share their storage, so a sweep of
        in-place writes accumulates). Ends the test like `call` if any call does not
        return; the report names the input. Use it for sweeps such as all 256 bytes.
        """
        out = self.session.map(name, list(calls), timeout=timeout or self.timeout)
        self.last_output = out.output
        if not out.ok:
            status, line = abort_line(name, out)
            index = (out.exc or {}).get("index")
            if status is not Status.TODO and isinstance(index, int) and index < len(calls):
                args = ", ".join(brief(a) for a in calls[index])
                line.name = line.name + tr(f"（输入 {args}）", f" (input {args})")
            raise Abort(status, line)
        values = out.value if isinstance(out.value, list) else []
        after = out.args if len(out.args) == len(values) else [list(c) for c in calls]
        return [
            Call(name, v, list(a), {}, out.output, out.seconds / max(len(values), 1))
            for v, a in zip(values, after, strict=True)
        ]

    def method(self, handle: Handle, name: str, *args: Any, **kwargs: Any) -> Call:
        """Call method `name` of an object that lives in the sandbox."""
        out = self.session.call(name, *args, target=handle, timeout=self.timeout, **kwargs)
        return self._returned(name, out, args)

    def build(
        self, target: str, *args: Any, attrs: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        """Construct framework object `target` ("framework.module:Name") in the sandbox."""
        out = self.session.build(Build(target, args, kwargs, attrs), timeout=self.timeout)
        if not out.ok:
            raise Abort(*abort_line(target, out))
        return out.value

    def getattr(self, handle: Handle, name: str) -> Any:
        """Read an attribute of an object in the sandbox (plain data, or another handle)."""
        out = self.session.getattr(handle, name, timeout=self.timeout)
        if not out.ok:
            raise Abort(*abort_line(name, out))
        return out.value

    def rng(self, seed: int) -> np.random.Generator:
        """A seeded generator; failures in this test print the seed."""
        if seed not in self.seeds:
            self.seeds.append(seed)
        return np.random.default_rng(seed)

    # -- assertions -----------------------------------------------------------------------
    def check(self, name: Name, ok: bool, detail: Name | None = None) -> bool:
        """Record a check that passes when `ok` is true; `detail` explains a failure."""
        message = None if ok or detail is None else as_text(detail)
        self._record(name, bool(ok), message)
        return bool(ok)

    def close(
        self, name: Name, actual: Any, expected: float, *, atol: float, rtol: float = 0.0
    ) -> bool:
        """A scalar within atol + rtol·|expected| of `expected` (NaN fails)."""
        ok, msg = compare_close(actual, float(expected), atol=atol, rtol=rtol)
        self._record(name, ok, msg)
        return ok

    def allclose(
        self, name: Name, actual: Any, expected: Any, *, atol: float, rtol: float = 0.0
    ) -> bool:
        """An array of the expected shape, every cell within tolerance (NaN fails)."""
        ok, msg = compare_allclose(actual, expected, atol=atol, rtol=rtol)
        self._record(name, ok, msg)
        return ok

    def equal(self, name: Name, actual: Any, expected: Any) -> bool:
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
        self._record(name, ok, msg)
        return ok

    def shape(self, name: Name, actual: Any, expected: Sequence[int]) -> bool:
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

    def unchanged(self, name: Name, before: Any, after: Any) -> bool:
        """`after` is bit-for-bit the same array as `before` (an input left untouched)."""
        a, b = to_array(after), to_array(before)
        ok = (
            a is not None
            and b is not None
            and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=True))
        )
        return self.check(
            name,
            ok,
            tr(
                "参数被改动了：这个函数不应修改它的输入（请返回新的 Tensor）",
                "an argument was modified: this function must leave its inputs unchanged "
                "(return a new Tensor)",
            ),
        )

    def finite(self, name: Name, actual: Any) -> bool:
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

    def raises(
        self, name: Name, exc: type[BaseException], fn: str, *args: Any, **kwargs: Any
    ) -> bool:
        """Calling `fn(*args)` raises `exc` (or a subclass), with a message."""
        out = self.attempt(fn, *args, **kwargs)
        want = exc.__name__
        if out.kind == "exception" and out.exc is not None:
            mro = out.exc.get("mro", [out.exc.get("type")])
            got = str(out.exc.get("type"))
            ok = want in mro
            return self.check(
                name,
                ok,
                tr(
                    f"期望抛出 {want}，实际抛出 {got}: {out.exc.get('message', '')}",
                    f"expected {want}, but {got} was raised: {out.exc.get('message', '')}",
                ),
            )
        if out.ok:
            return self.check(
                name,
                False,
                tr(
                    f"期望抛出 {want}，但函数正常返回了 {fmt(out.value)}",
                    f"expected {want} to be raised, but the call returned {fmt(out.value)}",
                ),
            )
        raise Abort(*abort_line(fn, out, args))

    def _record(self, name: Name, ok: bool, message: Text | None) -> None:
        if not ok and self.seeds and message is not None:
            seeds = ", ".join(str(s) for s in self.seeds)
            message = message + tr(
                f"\n（随机输入，seed={seeds}）", f"\n(random input, seed={seeds})"
            )
        output = self.last_output if not ok and self.last_output.strip() else ""
        self.checks.append(
            CheckResult(as_text(name), Status.PASS if ok else Status.FAIL, message, output)
        )
