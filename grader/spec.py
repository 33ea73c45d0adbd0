"""What a lab declares: its tests (`Lab.test`) and the framework calls it forbids (`Lab.forbid`).

A `Lab` holds `TestSpec`s in the order they are declared, each with its prerequisites,
limits, points and hints; `grader.runner` runs them, and `grader.dsl` (the check language,
which re-exports everything here) records what each test's checks find; `Call` and
`Raised` are what a test's calls give it back. What it does not do: call student code, or
judge anything.

Example:
    >>> lab = Lab("lab04", "多头自注意力", "Multi-head self-attention")
    >>> hint_levels(("先看形状", "look at the shapes first"))[0].en
    'look at the shapes first'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.i18n import Text, as_text

__all__ = [
    "Call",
    "Forbidden",
    "HintArg",
    "Lab",
    "Name",
    "Raised",
    "TestFn",
    "TestSpec",
    "hint_levels",
]

Name = Text | str | tuple[str, str]
TestFn = Callable[[Any], Any]  # a test: takes the `grader.dsl.TestContext` it runs with
HintArg = Name | Sequence[Name] | None  # one hint, or several from a nudge to the next step


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
    metamorphic: bool = False  # compares the student's function with itself (views, arrays)


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
        self.folder: Path | None = None  # the lab's folder, set when loaded from it

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
        metamorphic: bool = False,
    ) -> Callable[[TestFn], TestFn]:
        """Register a test. `requires`: tests (functions or ids) that must PASS first.

        `hint` is shown under every failing check of the test that has no hint of its own.
        `metamorphic`: the test is about an input kind (non-contiguous views, ndarrays) and
        compares the student's result on it with their own result on a plain Tensor, so a
        core bug does not fail it (the course's tests hold every lab to that).
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
            self.tests[-1].metamorphic = metamorphic
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
