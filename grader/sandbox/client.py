"""The grader's side of the sandbox: the zygote of a run, its limits, and its children.

`Sandbox` owns one zygote (see `zygote.py`) for a grading run, forks children from it (one
spare is always being forked ahead, so the next child is ready when needed), and hands them
out as `Session`s (see `session.py`). Nothing here runs student code.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any

from grader.sandbox.launch import launch, take_prestarted
from grader.sandbox.session import CallOutcome, Session, kill_group

__all__ = ["DEFAULT_LIMITS", "CallOutcome", "Limits", "Sandbox", "SandboxError", "Session"]


class SandboxError(RuntimeError):
    """The sandbox machinery itself failed (not the student's code)."""


@dataclass(frozen=True)
class Limits:
    """Per-call limits. `timeout` in seconds, `memory` and `output` in bytes."""

    timeout: float = 5.0
    memory: int = 2 * 1024**3
    output: int = 64 * 1024


DEFAULT_LIMITS = Limits()


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
                kill_group(pid)
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
