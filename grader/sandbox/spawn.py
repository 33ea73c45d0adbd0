"""The spawn backend: every sandbox child is a fresh interpreter (no fork, no zygote).

For systems where fork is missing (Windows) or unsafe (macOS). A child is
`python -m grader.sandbox.child` started with `subprocess`, connected over a socket (see
`launch.start_fresh`); its output pipe is drained by a thread (`channel.PumpOutput`). A
child costs a fresh interpreter's imports (~0.2 s), so the first one is started early and
warms up while the grader loads the checks; once a run has needed a second child, one
spare is kept warming.
"""

from __future__ import annotations

import hmac
import os
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any

from grader.sandbox.channel import Child, PumpOutput
from grader.sandbox.launch import Fresh, start_fresh, take_prestarted
from grader.sandbox.limits import SandboxError
from grader.sandbox.protocol import parse_json, recv_frame, recv_json, send_json

__all__ = ["SpawnBackend"]

_CONNECT_TIMEOUT = 60.0


class SpawnBackend:
    """Fresh-interpreter children; `setup(student)` gives each one's setup message, and
    `adopt(pid)`, if given, is called with a child's pid before it gets that message."""

    name = "spawn"

    def __init__(
        self,
        setup: Callable[[str], dict[str, Any]],
        transport: str | None = None,
        adopt: Callable[[int], None] | None = None,
    ):
        self._setup = setup
        self._transport = transport
        self._adopt = adopt
        self._warm: list[Fresh] = []
        self._spawned = 0

    def start(self) -> None:
        """Start warming the first child (or adopt the one `launch.prestart` started)."""
        if self._warm:
            return
        fresh = take_prestarted(self.name) if self._transport is None else None
        self._warm.append(fresh if isinstance(fresh, Fresh) else start_fresh(self._transport))

    def spawn(self, student_path: str) -> Child:
        """A child serving `student_path` (its import result is the first reply)."""
        self.start()
        fresh = self._warm.pop(0)
        self._spawned += 1
        try:
            conn = _connect(fresh)
            conn.settimeout(_CONNECT_TIMEOUT)
            if recv_json(conn).get("warm") is not True:  # its own imports are not the student's
                raise ValueError("a sandbox child did not warm up")
            conn.settimeout(None)
            setup = self._setup(student_path)
            if self._adopt is not None:  # before it imports the student's module
                self._adopt(fresh.proc.pid)
            send_json(conn, setup)
        except (OSError, EOFError, ValueError) as e:
            _end(fresh)
            raise SandboxError(f"a sandbox child failed to start: {e}") from None
        assert fresh.proc.stdout is not None
        out = os.dup(fresh.proc.stdout.fileno())  # the pump owns and closes its copy
        fresh.proc.stdout.close()
        child = Child(
            fresh.proc.pid,
            conn,
            PumpOutput(out, int(setup["output"])),
            int(setup["gen"]),
            str(setup.get("traceback", "")),
            fresh.proc,
            fresh.proc.pid,
        )
        if self._spawned >= 2:  # this run replaces children: keep the next one warming
            self.start()
        return child

    def reap(self, child: Child) -> int | None:
        """How the child ended, as a POSIX wait status (signal number, or code << 8)."""
        if child.proc is None:
            return None
        try:
            code = child.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None
        return -code if code < 0 else code << 8

    def close(self) -> None:
        """End the children still warming."""
        for fresh in self._warm:
            _end(fresh)
        self._warm.clear()


def _connect(fresh: Fresh) -> socket.socket:
    if fresh.conn is not None:
        return fresh.conn
    listener = fresh.listener
    assert listener is not None
    deadline = time.monotonic() + _CONNECT_TIMEOUT
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or fresh.proc.poll() is not None:
                raise SandboxError("a sandbox child did not connect")
            listener.settimeout(min(remaining, 0.5))
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(10)
            try:
                hello = parse_json(recv_frame(conn, 1024))
            except (OSError, EOFError, ValueError):
                conn.close()
                continue
            if hmac.compare_digest(str(hello.get("token", "")), fresh.token):
                conn.settimeout(None)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return conn
            conn.close()  # something else on this machine connected: ignore it
    finally:
        listener.close()
        fresh.listener = None


def _end(fresh: Fresh) -> None:
    if fresh.conn is not None:
        fresh.conn.close()
    if fresh.listener is not None:
        fresh.listener.close()
    try:
        fresh.proc.kill()
        fresh.proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        pass
    if fresh.proc.stdout is not None:
        fresh.proc.stdout.close()
