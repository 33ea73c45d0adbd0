"""The grader's side of the sandbox: start the zygote, open sessions, make calls.

`Sandbox` owns one zygote for a grading run. `Session` is a forked child serving one
student module across calls. A child that misbehaved at the process level (timed out,
crashed or exited, printed past the cap, ran out of memory or recursion) is ended, and the
next call forks a fresh one from the zygote, so one bad call cannot poison the rest of a run.
`Session.call` returns a `CallOutcome` and never raises for anything the student's code did:
a timeout, a crash, an exception, too much output or an unsendable value are all described in
the outcome.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from grader import codec
from grader.sandbox.launch import launch, take_prestarted
from grader.sandbox.protocol import send_frame

__all__ = ["DEFAULT_LIMITS", "CallOutcome", "Limits", "Sandbox", "SandboxError", "Session"]


_POISONED = frozenset({"MemoryError", "RecursionError", "SystemExit", "KeyboardInterrupt"})


class SandboxError(RuntimeError):
    """The sandbox machinery itself failed (not the student's code)."""


@dataclass(frozen=True)
class Limits:
    """Per-call limits. `timeout` in seconds, `memory` and `output` in bytes."""

    timeout: float = 5.0
    memory: int = 2 * 1024**3
    output: int = 64 * 1024


DEFAULT_LIMITS = Limits()


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


class Sandbox:
    """One pre-warmed zygote process; create sessions with `session(student_path)`."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self._proc: subprocess.Popen[bytes] | None = None
        self._ctl: socket.socket | None = None
        self._ready = False
        self.workdir = ""  # scratch folder: the children's working directory and TMPDIR
        self._spare: dict[str, list[tuple[int, socket.socket, int]]] = {}
        self._pending: list[tuple[str, socket.socket, int]] = []

    def start(self) -> None:
        """Start the zygote without waiting for it (it warms up in parallel)."""
        if self._proc is not None:
            return
        self._proc, self._ctl = take_prestarted() or launch()
        self._ready = False
        if not self.workdir:
            self.workdir = tempfile.mkdtemp(prefix="minillm-sandbox-")

    def _wait_ready(self) -> socket.socket:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = None
            self.start()
        assert self._ctl is not None
        if not self._ready:
            self._ctl.settimeout(60)
            msg = self._ctl.recv(256)
            if not msg:
                raise SandboxError("the sandbox server failed to start")
            self._ready = True
        return self._ctl

    def _command(self, cmd: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any]:
        self._collect()
        ctl = self._wait_ready()
        try:
            ctl.settimeout(30)
            socket.send_fds(ctl, [json.dumps(cmd).encode()], fds or [])
            reply = ctl.recv(65536)
            if reply:
                result: dict[str, Any] = json.loads(reply)
                return result
        except OSError:
            pass
        self.close()
        raise SandboxError(f"the sandbox server did not answer {cmd['op']!r}")

    def session(self, student_path: str) -> Session:
        """A session for `student_path`; the child is forked on the first call."""
        return Session(self, os.path.abspath(student_path))

    def spawn(self, student_path: str) -> tuple[int, socket.socket, int]:
        """A child for `student_path`: the pre-forked spare if there is one, else a new one.

        The next spare's fork is requested right away but its reply is read only when it is
        needed, so the fork and the child's import overlap the caller's work.
        """
        if not self._spare.get(student_path) and not any(
            p == student_path for p, _, _ in self._pending
        ):
            self._fork_async(student_path)
        self._collect()
        child = self._spare[student_path].pop(0)
        self._fork_async(student_path)
        return child

    def _fork_async(self, student_path: str) -> None:
        ctl = self._wait_ready()
        conn_parent, conn_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        cmd = {
            "op": "spawn",
            "student": student_path,
            "mem": self.limits.memory,
            "cwd": self.workdir,
        }
        try:
            socket.send_fds(ctl, [json.dumps(cmd).encode()], [conn_child.fileno(), out_w])
        except OSError:
            conn_parent.close()
            os.close(out_r)
            self.close()
            raise SandboxError("the sandbox server is gone") from None
        finally:
            conn_child.close()
            os.close(out_w)
        os.set_blocking(out_r, False)
        self._pending.append((student_path, conn_parent, out_r))

    def _collect(self) -> None:
        """Read the replies of spawn requests sent earlier, in order."""
        while self._pending and self._ctl is not None:
            path, conn, out = self._pending.pop(0)
            self._ctl.settimeout(30)
            try:
                reply = self._ctl.recv(65536)
            except OSError:
                reply = b""
            if not reply:
                conn.close()
                os.close(out)
                self.close()
                raise SandboxError("the sandbox server did not answer 'spawn'")
            self._spare.setdefault(path, []).append((int(json.loads(reply)["pid"]), conn, out))

    def reap(self, pid: int) -> int | None:
        try:
            return int(self._command({"op": "reap", "pid": pid})["status"])
        except SandboxError:
            return None

    def close(self) -> None:
        """Stop the zygote and any spare child (other children are ended by their sessions)."""
        try:
            self._collect()
        except SandboxError:
            pass
        for spares in self._spare.values():
            for pid, conn, out in spares:
                _kill_group(pid)
                conn.close()
                os.close(out)
        self._spare.clear()
        for _, conn, out in self._pending:
            conn.close()
            os.close(out)
        self._pending.clear()
        if self._ctl is not None:
            self._ctl.close()
            self._ctl = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        self._ready = False
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = ""

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
            _kill_group(self.pid)
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
            _kill_group(pid)
            outcome.exit_status = self.sandbox.reap(pid)
            self.pid = None
        return outcome


def _kill_group(pid: int) -> None:
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
