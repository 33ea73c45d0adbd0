"""One sandbox child serving one student module: calls, limits, and what came back.

`Session.call` sends a request and waits for the reply while draining the child's output,
enforcing the time and output limits. It never raises for anything the student's code did:
a timeout, a crash or exit, an exception, too much output or an unsendable value are all
described in the `CallOutcome`. A child that misbehaved at the process level (timed out,
crashed or exited, printed past the cap, ran out of memory or recursion) is ended, and the
next call forks a fresh one, so one bad call cannot poison the rest of a run.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from grader import codec
from grader.sandbox.protocol import send_frame

if TYPE_CHECKING:
    from grader.sandbox.client import Sandbox

__all__ = ["CallOutcome", "Session", "kill_group"]

_POISONED = frozenset({"MemoryError", "RecursionError", "SystemExit", "KeyboardInterrupt"})


@dataclass
class CallOutcome:
    """What happened in one call into student code.

    `kind` is one of: ``ok``, ``exception``, ``todo``, ``missing`` (no such function),
    ``timeout``, ``crash`` (the process ended), ``overflow`` (printed past the cap),
    ``import`` (the module failed to import), ``harness`` (the grader's own request failed).
    """

    kind: str
    value: Any = None
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    exc: dict[str, Any] | None = None
    output: str = ""
    output_bytes: int = 0
    seconds: float = 0.0
    exit_status: int | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


class Session:
    """One sandbox child serving one student module. Not thread-safe."""

    def __init__(self, sandbox: Sandbox, student_path: str) -> None:
        self.sandbox = sandbox
        self.student_path = student_path
        self.pid: int | None = None
        self._conn: socket.socket | None = None
        self._out: int | None = None
        self.import_outcome: CallOutcome | None = None
        self._generation = 0

    # -- lifecycle ------------------------------------------------------------------------
    def ensure(self, timeout: float | None = None) -> CallOutcome | None:
        """Fork the child if needed; return an outcome if the module failed to import."""
        if self._conn is not None:
            return None
        if timeout is None:
            timeout = self.sandbox.limits.timeout
        self.pid, self._conn, self._out = self.sandbox.spawn(self.student_path)
        self._generation += 1
        out = self._exchange(None, timeout)
        if out.kind == "ok":
            return None
        if out.kind == "timeout":
            out = CallOutcome(
                "import",
                exc={
                    "type": "TimeoutError",
                    "message": (
                        f"importing took more than {timeout:g} s (module-level code runs at import)"
                    ),
                },
                output=out.output,
            )
        elif out.kind == "crash":
            out = CallOutcome(
                "import",
                exc={
                    "type": "SystemExit",
                    "message": ("the module ended the process while importing"),
                    "frames": [],
                },
                output=out.output,
            )
        self.import_outcome = out
        self.close()
        return out

    def close(self) -> None:
        """End the child and every process in its group."""
        if self.pid is not None:
            kill_group(self.pid)
            self.pid = None
        self._drop_pipes()

    def _drop_pipes(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._out is not None:
            os.close(self._out)
            self._out = None

    @property
    def generation(self) -> int:
        """Increases each time a new child is forked (handles of older ones are gone)."""
        return self._generation

    # -- calls ----------------------------------------------------------------------------
    def call(
        self,
        name: str,
        *args: Any,
        target: codec.Handle | None = None,
        timeout: float | None = None,
        count: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> CallOutcome:
        """Call student function `name` (or method `name` of handle `target`).

        `count` names other student functions to count calls of during this call; the
        numbers come back in `CallOutcome.counts`.
        """
        req = {
            "op": "call",
            "target": target,
            "name": name,
            "args": list(args),
            "kwargs": kwargs,
            "count": list(count),
        }
        return self._request(req, timeout)

    def map(
        self, name: str, calls: list[tuple[Any, ...]], timeout: float | None = None
    ) -> CallOutcome:
        """Call student function `name` once per argument tuple, in one round trip.

        The value is the list of results; on the first exception the outcome describes it
        and `exc["index"]` says which call raised.
        """
        return self._request(
            {"op": "map", "name": name, "calls": [list(c) for c in calls]}, timeout
        )

    def getattr(self, target: codec.Handle, name: str, timeout: float | None = None) -> CallOutcome:
        """Read attribute `name` of an object in the child."""
        return self._request({"op": "getattr", "target": target, "name": name}, timeout)

    def build(self, spec: codec.Build, timeout: float | None = None) -> CallOutcome:
        """Construct a framework object inside the child; the value is usually a handle."""
        return self._request({"op": "build", "target": spec}, timeout)

    def _request(self, req: dict[str, Any], timeout: float | None) -> CallOutcome:
        limit = self.sandbox.limits.timeout if timeout is None else timeout
        failed = self.ensure(limit)
        if failed is not None:
            return failed
        assert self._conn is not None
        try:
            frame = codec.dumps(req)
        except codec.CodecError as e:
            return CallOutcome("harness", exc={"type": "CodecError", "message": str(e)})
        try:
            self._conn.settimeout(limit)
            send_frame(self._conn, frame)
        except TimeoutError:
            self.close()
            return CallOutcome("timeout", seconds=limit)
        except OSError:
            return self._crashed(CallOutcome("crash"))
        out = self._exchange(req, limit)
        if out.kind in ("overflow", "harness") or (
            out.kind == "exception" and (out.exc or {}).get("type") in _POISONED
        ):
            self.close()  # the next call gets a fresh child
        return out

    def _exchange(self, req: dict[str, Any] | None, limit: float) -> CallOutcome:
        """Wait for one reply while draining output; enforce time and output limits."""
        assert self._conn is not None and self._out is not None
        conn, out_fd = self._conn, self._out
        cap = self.sandbox.limits.output
        kept = bytearray()
        total = 0
        header = bytearray()
        body = bytearray()
        need: int | None = None
        start = time.monotonic()
        deadline = start + limit
        conn.setblocking(False)
        out_open = True
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                return CallOutcome("timeout", output=_text(kept), output_bytes=total, seconds=limit)
            fds = [conn] + ([out_fd] if out_open else [])
            readable, _, _ = select.select(fds, [], [], remaining)
            if out_open and out_fd in readable:
                try:
                    chunk = os.read(out_fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    out_open = False
                else:
                    total += len(chunk)
                    if len(kept) < cap:
                        kept += chunk[: cap - len(kept)]
            if conn in readable:
                try:
                    data = conn.recv(1 << 20)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    return self._crashed(
                        CallOutcome("crash", output=_text(kept), output_bytes=total)
                    )
                if need is None:
                    header += data
                    if len(header) >= 8:
                        need = int.from_bytes(header[:8], "little")
                        if need > codec.MAX_FRAME:
                            self.close()
                            return CallOutcome(
                                "harness", exc={"type": "CodecError", "message": "reply too large"}
                            )
                        body += header[8:]
                else:
                    body += data
                if need is not None and len(body) >= need:
                    break
        # drain what the child flushed before replying
        while out_open:
            try:
                chunk = os.read(out_fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            total += len(chunk)
            if len(kept) < cap:
                kept += chunk[: cap - len(kept)]
        elapsed = time.monotonic() - start
        try:
            reply = codec.loads(bytes(body[:need]))
        except codec.CodecError as e:
            self.close()
            return CallOutcome("harness", exc={"type": "CodecError", "message": str(e)})
        return _outcome(reply, req, _text(kept), total, elapsed, cap)

    def _crashed(self, outcome: CallOutcome) -> CallOutcome:
        pid = self.pid
        self._drop_pipes()
        if pid is not None:
            kill_group(pid)
            outcome.exit_status = self.sandbox.reap(pid)
            self.pid = None
        return outcome


def kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _text(raw: bytes | bytearray) -> str:
    return bytes(raw).decode("utf-8", errors="replace")


def _outcome(
    reply: Any, req: dict[str, Any] | None, output: str, total: int, elapsed: float, cap: int
) -> CallOutcome:
    if not isinstance(reply, dict):
        return CallOutcome("harness", exc={"type": "CodecError", "message": "bad reply"})
    base: dict[str, Any] = {"output": output, "output_bytes": total, "seconds": elapsed}
    if req is None:  # the import handshake
        if reply.get("ready") is True:
            return CallOutcome("ok", **base)
        return CallOutcome("import", exc=_dict(reply.get("exc")), **base)
    args = reply.get("args", [])
    kwargs = reply.get("kwargs", {})
    base["args"] = args if isinstance(args, list) else []
    base["kwargs"] = kwargs if isinstance(kwargs, dict) else {}
    if total > cap:
        return CallOutcome("overflow", **base)
    if reply.get("ok") is True:
        counts = reply.get("counts", {})
        if isinstance(counts, dict):
            base["counts"] = {str(k): v for k, v in counts.items() if isinstance(v, int)}
        return CallOutcome("ok", value=reply.get("value"), **base)
    exc = _dict(reply.get("exc"))
    if isinstance(reply.get("index"), int):
        exc["index"] = reply["index"]
    if reply.get("harness"):
        return CallOutcome("harness", exc=exc, **base)
    if reply.get("missing"):
        return CallOutcome("missing", exc=exc, **base)
    if reply.get("todo"):
        return CallOutcome("todo", exc=exc, **base)
    return CallOutcome("exception", exc=exc, **base)


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {"type": "?", "message": repr(x)[:200]}
