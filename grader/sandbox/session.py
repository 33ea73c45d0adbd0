"""One sandbox child serving one student module: calls, limits, and what came back.

`Session.call` sends a request and waits for the reply while draining the child's output,
enforcing the time and output limits. It never raises for anything the student's code did:
a timeout, a crash or exit, an exception, too much output, a forbidden call or an
unsendable value are all described in the `CallOutcome`. A child that misbehaved at the
process level (timed out, crashed or exited, printed past the cap, ran out of memory or
recursion) is ended, and the next call gets a fresh one, so one bad call cannot poison the
rest of a run. Hangs cost little: a function that timed out once fails at once when called
again in the same session, and the session has a deadline of its own.

A session needs only a small protocol from its sandbox (`Spawner`): ``spawn`` a child for a
student module, ``reap`` it, and the run's ``limits``. What an outcome is (`CallOutcome`, its
`Outcome` kind and its `ExcInfo`) is in `grader.sandbox.outcome`; the child's exception
records are decoded there, as the hostile input they are.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Protocol

from grader import codec
from grader.codec.values import MAX_REPEAT
from grader.codec.values import entropy as codec_entropy
from grader.sandbox.channel import Child
from grader.sandbox.limits import Limits, dump_time
from grader.sandbox.outcome import CallOutcome, ExcInfo, Outcome, exc_info, frames_of
from grader.sandbox.protocol import FrameReader, send_frame
from grader.sandbox.stacks import stuck_frames

__all__ = ["CallOutcome", "ExcInfo", "Outcome", "Session", "Spawner"]

_POISONED = frozenset({"MemoryError", "RecursionError", "SystemExit", "KeyboardInterrupt"})
_OUTPUT_WAIT = 2.0  # seconds to wait for a reply's output to arrive after the reply
_CRASH_WAIT = 0.5


class Spawner(Protocol):
    """What a `Session` needs from its sandbox."""

    @property
    def limits(self) -> Limits: ...

    def spawn(self, student_path: str) -> Child: ...

    def reap(self, child: Child) -> int | None: ...


def seeded_request(
    name: str, args: tuple[Any, ...], seed: tuple[int, ...], n: int, forbid: tuple[str, ...]
) -> dict[str, Any]:
    """The request of a seeded sweep (see `Session.map_seeded`), its seed and count checked.

    Raises:
        ValueError: a count below 0 or above the child's limit, or a seed that is not 0 to
            7 integers in [0, 2**128) (the last of at most 8 is the call's index).
    """
    if type(n) is not int or not 0 <= n <= MAX_REPEAT:
        raise ValueError(f"a seeded sweep makes 0 to {MAX_REPEAT} calls, not {n!r}")
    try:
        codec_entropy([*seed, 0])
    except codec.CodecError as e:
        raise ValueError(f"bad seed prefix {seed!r}: {e}") from None
    req: dict[str, Any] = {"op": "map", "name": name, "calls": [list(args)], "args": False}
    req.update(seed=list(seed), repeat=n, forbid=list(forbid))
    return req


class Session:
    """One sandbox child at a time serving one student module. Not thread-safe.

    `deadline`: seconds for the whole session (default: the sandbox's
    ``limits.deadline``), counted from its creation; once passed, every call fails at once
    as a timeout.
    """

    def __init__(self, sandbox: Spawner, student_path: str, deadline: float | None = None) -> None:
        self.sandbox = sandbox
        self.student_path = student_path
        self.deadline = sandbox.limits.deadline if deadline is None else deadline
        self.import_outcome: CallOutcome | None = None
        self._child: Child | None = None
        self._generation = 0
        self._seq = 0  # replies received from the current child
        self._started = time.monotonic()
        self._replaced: dict[int, str] = {}  # child gen -> why it was replaced
        self._timed_out: dict[str, CallOutcome] = {}  # function -> its first timeout

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """The current child's process id (None between children)."""
        return None if self._child is None else self._child.pid

    @property
    def generation(self) -> int:
        """Increases each time this session gets a new child."""
        return self._generation

    @property
    def child_gen(self) -> int:
        """The sandbox-wide generation of the current child (what its handles carry)."""
        return 0 if self._child is None else self._child.gen

    def ensure(self, timeout: float | None = None) -> CallOutcome | None:
        """Start the child if needed; return an outcome if the module failed to import."""
        if self._child is not None:
            return None
        if timeout is None:
            timeout = self.sandbox.limits.timeout
        self._child = self.sandbox.spawn(self.student_path)
        self._generation += 1
        self._seq = 0
        out = self._exchange(None, timeout, self.sandbox.limits.output)
        if out.kind is Outcome.OK:
            return None
        if out.kind is Outcome.TIMEOUT:
            message = f"importing took more than {timeout:g} s (module-level code runs at import)"
            exc = ExcInfo("TimeoutError", message, frames=out.error.frames)
            out = CallOutcome(Outcome.IMPORT, exc=exc, output=out.output)
        elif out.kind is Outcome.CRASH:
            exc = ExcInfo("SystemExit", "the module ended the process while importing")
            out = CallOutcome(Outcome.IMPORT, exc=exc, output=out.output)
        self.import_outcome = out
        self._retire("the module failed to import")
        return out

    def close(self) -> None:
        """End the child and every process in its group."""
        self._retire("the session was closed")

    def _retire(self, why: str) -> None:
        child, self._child = self._child, None
        if child is not None:
            self._replaced[child.gen] = why
            child.kill()
            child.release()

    # -- calls ----------------------------------------------------------------------------
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
        """Call student function `name` (or method `name` of handle `target`).

        `count` names other student functions to count calls of during this call (by code
        object, so aliases count); the numbers come back in `CallOutcome.counts`.
        `forbid` lists ``"module:qualname"`` functions that may not be called meanwhile
        (kind ``FORBIDDEN`` if one was). `output` raises or lowers the output cap in bytes.
        """
        req = {
            "op": "call",
            "target": target,
            "name": name,
            "args": list(args),
            "kwargs": kwargs,
            "count": list(count),
            "forbid": list(forbid),
        }
        key = name if target is None else f"{target.type_name}.{name}"
        return self._request(req, timeout, key, output)

    def map(
        self,
        name: str,
        calls: list[tuple[Any, ...]],
        timeout: float | None = None,
        forbid: tuple[str, ...] = (),
        output: int | None = None,
        return_args: bool = True,
    ) -> CallOutcome:
        """Call student function `name` once per argument tuple, in one round trip.

        The value is the list of results; on the first exception the outcome describes it
        and `exc.index` says which call raised. `forbid` and `output` as in `call`.
        `return_args=False`: the child does not send the arguments back (`args` is empty).
        """
        req: dict[str, Any] = {"op": "map", "name": name, "calls": [list(c) for c in calls]}
        req.update(forbid=list(forbid), args=return_args)
        return self._request(req, timeout, name, output)

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
        """`map` of ``name(*args, rng_i)`` for i < n in one round trip, where the child
        builds ``rng_i = default_rng([*seed, i])``: the arguments are sent once. The args
        are not sent back. Same outcome as `map` of the n tuples with `Seeded` last."""
        return self._request(seeded_request(name, args, seed, n, forbid), timeout, name, output)

    def getattr(self, target: codec.Handle, name: str, timeout: float | None = None) -> CallOutcome:
        """Read attribute `name` of an object in the child."""
        return self._request({"op": "getattr", "target": target, "name": name}, timeout)

    def build(self, spec: codec.Build, timeout: float | None = None) -> CallOutcome:
        """Construct a framework object inside the child; the value is usually a handle."""
        return self._request({"op": "build", "target": spec}, timeout)

    def _request(
        self,
        req: dict[str, Any],
        timeout: float | None,
        key: str | None = None,
        output: int | None = None,
    ) -> CallOutcome:
        limits = self.sandbox.limits
        limit = limits.timeout if timeout is None else timeout
        left = self.deadline - (time.monotonic() - self._started)
        if left <= 0:
            return self._deadline_passed()
        if key is not None and key in self._timed_out:
            return self._timed_out_before(key)
        cut = left < limit
        limit = min(limit, left)
        failed = self.ensure(min(max(limit, limits.timeout), left))  # importing is not the call
        if failed is not None:
            return failed
        stale = self._stale(req)
        if stale is not None:
            return stale
        assert self._child is not None
        req = {**req, "dump_at": dump_time(limit)}  # see worker.py, point 3
        try:
            frame = codec.dumps(req)
        except codec.CodecError as e:  # the grader's request: never the student's doing
            return CallOutcome(Outcome.HARNESS, exc=ExcInfo("CodecError", str(e)))
        cap = limits.output if output is None else output
        # The cap is set before the request leaves: on the spawn backend a thread reads the
        # output, and it may take the new call's first bytes before this thread goes on.
        self._child.output.begin(cap)
        try:
            self._child.conn.settimeout(limit)
            send_frame(self._child.conn, frame)
        except TimeoutError:  # the child stopped reading: it is stuck in something
            return self._timeout_outcome(self._stuck(limit), cut, key)
        except OSError:
            return self._crashed(CallOutcome(Outcome.CRASH))
        out = self._exchange(req, limit, cap)
        if out.kind is Outcome.TIMEOUT:
            out = self._timeout_outcome(out, cut, key)
        elif out.kind is Outcome.OVERFLOW:
            self._retire("printing too much")
        elif out.kind is Outcome.EXCEPTION and out.error.type in _POISONED:
            self._retire(f"a {out.error.type}")  # the next call gets a fresh child
        return out

    def _exchange(self, req: dict[str, Any] | None, limit: float, cap: int) -> CallOutcome:
        """Wait for one reply while draining output; enforce time and output limits."""
        child = self._child
        assert child is not None
        conn, output = child.conn, child.output
        reader = FrameReader(codec.DEFAULT_BUDGET.frame)
        start = time.monotonic()
        deadline = start + limit
        conn.setblocking(False)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self._stuck(limit)
            out_fd = output.fileno()
            fds: list[Any] = [conn] if out_fd is None else [conn, out_fd]
            readable, _, _ = select.select(fds, [], [], remaining)
            if out_fd is not None and out_fd in readable:
                output.read_some()
            if conn not in readable:
                continue
            try:
                data = conn.recv(reader.wanted())
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                return self._crashed(CallOutcome(Outcome.CRASH))
            try:
                frame = reader.feed(data)
            except codec.CodecError as e:  # the child sent it: the student's code can
                self._retire("an unreadable reply")
                return CallOutcome(Outcome.UNREADABLE, exc=ExcInfo("CodecError", str(e)))
            if frame is not None:
                break
        seq, self._seq = self._seq, self._seq + 1
        kept, total = output.collect(seq, min(max(deadline - time.monotonic(), 0.1), _OUTPUT_WAIT))
        elapsed = time.monotonic() - start
        try:
            reply = codec.loads(frame)
        except codec.CodecError as e:
            self._retire("an unreadable reply")
            return CallOutcome(Outcome.UNREADABLE, exc=ExcInfo("CodecError", str(e)))
        return _outcome(reply, req, _text(kept), total, elapsed, cap)

    # -- what went wrong ------------------------------------------------------------------
    def _stuck(self, limit: float) -> CallOutcome:
        """The call ran out of time: read where it was stuck, then end the child."""
        child = self._child
        assert child is not None
        child.request_dump()
        frames = stuck_frames(child.traceback_path, self.student_path)
        kept, total = child.output.collect(None, 0.0)
        self._retire("a timeout")
        return CallOutcome(
            Outcome.TIMEOUT,
            exc=ExcInfo("TimeoutError", f"no return within {limit:g} s", frames_of(frames)),
            output=_text(kept),
            output_bytes=total,
            seconds=limit,
        )

    def _timeout_outcome(self, out: CallOutcome, cut: bool, key: str | None) -> CallOutcome:
        exc = replace(out.error)
        if cut:
            exc.message = f"the run's deadline of {self.deadline:g} s passed during this call"
            exc.deadline = self.deadline
        elif key is not None:
            self._timed_out[key] = out
        out.exc = exc
        return out

    def _timed_out_before(self, key: str) -> CallOutcome:
        first = self._timed_out[key]
        message = (
            f"{key} timed out earlier in this run (no return within {first.seconds:g} s), "
            "so it is not called again"
        )
        exc = replace(first.error, message=message, first=first.seconds, repeat=True)
        return CallOutcome(Outcome.TIMEOUT, exc=exc, seconds=first.seconds)

    def _deadline_passed(self) -> CallOutcome:
        message = f"the run's deadline of {self.deadline:g} s has passed"
        exc = ExcInfo("TimeoutError", message, deadline=self.deadline)
        return CallOutcome(Outcome.TIMEOUT, exc=exc, seconds=self.deadline)

    def _stale(self, req: dict[str, Any]) -> CallOutcome | None:
        """An outcome if `req` holds a handle that the current child did not make."""
        for handle in _handles_in(req):
            if handle.gen == self.child_gen:
                continue
            why = self._replaced.get(handle.gen)
            if why is None:
                message = (
                    f"the {handle.type_name} object was created in another sandbox process, "
                    "not the one serving this session"
                )
            else:
                message = (
                    f"the {handle.type_name} object was created in an earlier sandbox process "
                    f"that was replaced after {why}"
                )
            return CallOutcome(Outcome.STALE, exc=ExcInfo("StaleHandle", message, gen=handle.gen))
        return None

    def _crashed(self, outcome: CallOutcome) -> CallOutcome:
        child, self._child = self._child, None
        if child is not None:
            self._replaced[child.gen] = "the process ended"
            child.kill()
            outcome.exit_status = self.sandbox.reap(child)
            kept, total = child.output.collect(None, _CRASH_WAIT)
            outcome.output, outcome.output_bytes = _text(kept), total
            child.release()
        return outcome


_LEAVES = (int, float, str, bool, type(None))  # exact types that hold no handle


def _handles_in(x: Any, depth: int = 0) -> Iterator[codec.Handle]:
    """Every handle inside a request, in order (a sweep holds thousands of plain values:
    they are skipped without a call each)."""
    if depth > 64:
        return
    if isinstance(x, codec.Handle):
        yield x
        return
    if isinstance(x, list | tuple):
        items: Any = x
    elif isinstance(x, dict):
        items = (v for kv in x.items() for v in kv)
    elif isinstance(x, codec.Build):
        items = (x.args, x.kwargs, x.attrs)
    else:
        return
    for v in items:
        if type(v) not in _LEAVES:
            yield from _handles_in(v, depth + 1)


def _text(raw: bytes | bytearray) -> str:
    return bytes(raw).decode("utf-8", errors="replace")


def _outcome(
    reply: Any, req: dict[str, Any] | None, output: str, total: int, elapsed: float, cap: int
) -> CallOutcome:
    if not isinstance(reply, dict):  # the child sent it: not a grader error
        return CallOutcome(Outcome.UNREADABLE, exc=ExcInfo("CodecError", "bad reply"))
    base: dict[str, Any] = {"output": output, "output_bytes": total, "seconds": elapsed}
    if req is None:  # the import handshake
        if reply.get("ready") is True:
            return CallOutcome(Outcome.OK, **base)
        return CallOutcome(Outcome.IMPORT, exc=exc_info(reply.get("exc")), **base)
    args = reply.get("args", [])
    kwargs = reply.get("kwargs", {})
    sent = req.get("args") if req.get("op") == "call" else None
    if isinstance(sent, list) and (not isinstance(args, list) or len(args) != len(sent)):
        args = [None] * len(sent)  # a reply that lies about the arguments proves nothing
    base["args"] = args if isinstance(args, list) else []
    base["kwargs"] = kwargs if isinstance(kwargs, dict) else {}
    if total > cap:
        return CallOutcome(Outcome.OVERFLOW, **base)
    forbidden = reply.get("forbidden")
    if isinstance(forbidden, list) and forbidden:
        targets = [str(t)[:300] for t in forbidden[:64]]
        names = ", ".join(t.replace(":", ".") for t in targets)
        message = f"it called {names}, which this check does not allow"
        frames = exc_info(reply.get("exc")).frames if not reply.get("ok") else []
        exc = ExcInfo("ForbiddenCall", message, frames, targets=targets)
        return CallOutcome(Outcome.FORBIDDEN, value=reply.get("value"), exc=exc, **base)
    if reply.get("ok") is True:
        counts = reply.get("counts", {})
        if isinstance(counts, dict):
            base["counts"] = {str(k): v for k, v in counts.items() if isinstance(v, int)}
        return CallOutcome(Outcome.OK, value=reply.get("value"), **base)
    exc = exc_info(reply.get("exc"))
    index = reply.get("index")
    if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
        exc.index = index
    # No flag of the reply makes a grader error: the child runs the student's code, which can
    # send any reply. A request that failed in the child is the student's exception; only
    # this side (a request it cannot send) reports ``HARNESS``.
    if reply.get("missing"):
        return CallOutcome(Outcome.MISSING, exc=exc, **base)
    if reply.get("todo"):
        return CallOutcome(Outcome.TODO, exc=exc, **base)
    return CallOutcome(Outcome.EXCEPTION, exc=exc, **base)
