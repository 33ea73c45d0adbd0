"""The in-process backend, for debugging only: the student's code runs in this process.

`pytest labs/lab04 --minillm-no-sandbox --pdb` must be able to stop inside the student's
function, which a separate process cannot offer. `InlineSandbox` serves the same requests
as a sandbox child, through the same worker code and the same codec (arguments are
copies, forbidden calls are trapped, TODO means the stub's own raise), but in the calling
process, so breakpoints and `--pdb` work.

What it deliberately does not do: no timeout, no output capture or cap, no memory limit, no
protection of the verdicts from the student's code. It is never used by `verify` or
`grade`; the pytest plugin says so in its header when it is on.
"""

from __future__ import annotations

import os
import time
from types import TracebackType
from typing import Any

from grader import codec
from grader.sandbox import worker
from grader.sandbox.limits import DEFAULT_LIMITS, Limits
from grader.sandbox.outcome import CallOutcome, Outcome, exc_info
from grader.sandbox.session import _outcome, seeded_request
from grader.sandbox.stackdump import StackDump
from grader.sandbox.studentcode import describe_exception, import_student

__all__ = ["InlineSandbox", "InlineSession"]


class InlineSession:
    """One student module imported in this process; the `Session` interface the DSL uses."""

    def __init__(self, student_path: str, limits: Limits) -> None:
        self.student_path = os.path.abspath(student_path)
        self.limits = limits
        self.import_outcome: CallOutcome | None = None
        self._ctx: Any = None

    @property
    def pid(self) -> int:
        return os.getpid()

    @property
    def generation(self) -> int:
        return 1

    @property
    def last_error(self) -> BaseException | None:
        """The exception the student's code last raised (with its traceback)."""
        return None if self._ctx is None else self._ctx.last_error

    def ensure(self, timeout: float | None = None) -> CallOutcome | None:
        """Import the module once; an outcome of kind ``IMPORT`` if that fails."""
        if self._ctx is not None:
            return None
        if self.import_outcome is not None:
            return self.import_outcome
        folder = os.path.dirname(self.student_path) + os.sep
        try:
            module = import_student(self.student_path)
        except BaseException as e:
            exc = exc_info(describe_exception(e, folder))
            self.import_outcome = CallOutcome(Outcome.IMPORT, exc=exc)
            return self.import_outcome
        self._ctx = worker._Context(module, self.student_path, 1, StackDump(""))
        return None

    def call(
        self,
        name: str,
        *args: Any,
        target: codec.Handle | None = None,
        timeout: float | None = None,
        count: tuple[str, ...] = (),
        forbid: tuple[str, ...] = (),
        output: int | None = None,
        **kwargs: Any,
    ) -> CallOutcome:
        req: dict[str, Any] = {"op": "call", "target": target, "name": name, "args": list(args)}
        req.update(kwargs=kwargs, count=list(count), forbid=list(forbid))
        return self._request(req)

    def map(
        self,
        name: str,
        calls: list[tuple[Any, ...]],
        timeout: float | None = None,
        forbid: tuple[str, ...] = (),
        output: int | None = None,
        return_args: bool = True,
    ) -> CallOutcome:
        req: dict[str, Any] = {"op": "map", "name": name, "calls": [list(c) for c in calls]}
        req.update(forbid=list(forbid), args=return_args)
        return self._request(req)

    def map_seeded(
        self,
        name: str,
        args: tuple[Any, ...],
        seed: tuple[int, ...],
        n: int,
        timeout: float | None = None,
        forbid: tuple[str, ...] = (),
        output: int | None = None,
    ) -> CallOutcome:
        return self._request(seeded_request(name, args, seed, n, forbid))

    def getattr(self, target: codec.Handle, name: str, timeout: float | None = None) -> CallOutcome:
        return self._request({"op": "getattr", "target": target, "name": name})

    def build(self, spec: codec.Build, timeout: float | None = None) -> CallOutcome:
        return self._request({"op": "build", "target": spec})

    def _request(self, req: dict[str, Any]) -> CallOutcome:
        failed = self.ensure()
        if failed is not None:
            return failed
        start = time.perf_counter()
        self._ctx.last_error = None
        reply = worker._handle(codec.dumps(req), self._ctx)  # the child's code, in this process
        payload = codec.dumps(reply, make_handle=self._ctx.handles.make)
        elapsed = time.perf_counter() - start
        return _outcome(codec.loads(payload), req, "", 0, elapsed, self.limits.output)

    def close(self) -> None:
        self._ctx = None


class InlineSandbox:
    """A stand-in for `Sandbox` whose sessions run the student's code in this process.

    It has the attributes the runner reports (`grader.runner.RunSandbox`): its memory note
    and its isolation note say that nothing here is limited or isolated.
    """

    backend = "inline"
    memory_limited = False
    memory_note = "the student's code runs inside this process (debugging)"
    isolation_note = "not isolated: the student's code runs inside the grader's process"

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def start(self) -> None:
        """Nothing to start."""

    def session(self, student_path: str, deadline: float | None = None) -> InlineSession:
        return InlineSession(student_path, self.limits)

    def close(self) -> None:
        """Nothing to stop."""

    def __enter__(self) -> InlineSandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
