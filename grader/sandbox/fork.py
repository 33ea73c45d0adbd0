"""The fork backend: children forked from a pre-warmed zygote (see `zygote.py`).

One zygote per grading run imports numpy and the framework once; a child then costs a fork
(about a millisecond). Once a run has needed a second child for a student module, a spare is
always being forked ahead, so the next child is ready when a session needs one. The control
channel is a stream socket carrying `protocol` frames of JSON, with the child's socket and
output pipe passed as SCM_RIGHTS descriptors alongside a ``spawn`` command.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
from collections.abc import Callable
from typing import Any, Protocol

from grader.codec import CodecError
from grader.sandbox.channel import Child, PipeOutput
from grader.sandbox.launch import ZygoteProcess, launch, take_prestarted
from grader.sandbox.limits import SandboxError, file_stamp
from grader.sandbox.protocol import recv_json, send_json

__all__ = ["ForkBackend", "Launcher"]

_START_TIMEOUT = 60.0
_REPLY_TIMEOUT = 30.0


class Launcher(Protocol):
    """Starts the zygote somewhere else than beside the grader (`grader.sandbox.isolated` runs it
    under bubblewrap, in namespaces of its own)."""

    def launch(self) -> tuple[ZygoteProcess, socket.socket]:
        """Start a zygote; the process and the grader's end of its control socket."""
        ...

    def locate(self, zygote: ZygoteProcess, pid: int, traceback: str) -> tuple[int | None, str]:
        """Where a child that the zygote reports as `pid` is, for the grader: its pid in the
        grader's pid namespace (None if it cannot be found) and the path, for the grader,
        of the stack dump file the child knows as `traceback`."""
        ...


class ForkBackend:
    """A zygote and its children; `setup(student)` gives each child's spawn command, and
    `adopt(pid)`, if given, is called with the zygote's pid as soon as it is started.
    `launcher` starts the zygote elsewhere (default: `launch.launch`, beside the grader)."""

    name = "fork"

    def __init__(
        self,
        setup: Callable[[str], dict[str, Any]],
        adopt: Callable[[int], None] | None = None,
        launcher: Launcher | None = None,
    ) -> None:
        self._setup = setup
        self._adopt = adopt
        self._launcher = launcher
        self._proc: ZygoteProcess | None = None
        self._ctl: socket.socket | None = None
        self._ready = False
        self._spare: dict[str, list[tuple[Child, bytes]]] = {}  # (child, file_stamp)
        self._spawned: set[str] = set()  # files a child was handed out for
        self._pending: list[tuple[str, socket.socket, int, dict[str, Any]]] = []

    def start(self) -> None:
        """Start the zygote without waiting for it (it warms up in parallel)."""
        if self._proc is not None:
            return
        if self._launcher is not None:
            self._proc, self._ctl = self._launcher.launch()
        else:
            zygote = take_prestarted(self.name)
            self._proc, self._ctl = zygote if isinstance(zygote, tuple) else launch()
        self._ready = False
        if self._adopt is not None:  # it forks nothing before our first spawn command
            self._adopt(self._proc.pid)

    def _wait_ready(self) -> socket.socket:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = None
            self.start()
        assert self._ctl is not None
        if not self._ready:
            try:
                self._ctl.settimeout(_START_TIMEOUT)
                ready = recv_json(self._ctl).get("ready")
            except (OSError, EOFError, CodecError):
                ready = False
            if ready is not True:
                self.close()
                raise SandboxError("the sandbox server failed to start")
            self._ready = True
        return self._ctl

    def _reply(self, op: str) -> dict[str, Any]:
        assert self._ctl is not None
        try:
            self._ctl.settimeout(_REPLY_TIMEOUT)
            return recv_json(self._ctl)
        except (OSError, EOFError, CodecError):
            raise SandboxError(f"the sandbox server did not answer {op!r}") from None

    def spawn(self, student_path: str) -> Child:
        """A child for `student_path`: the pre-forked spare if there is one, else a new one.

        A run asks for a second child for the same file only when the first was replaced
        (a timeout, a crash): from then on the next spare is forked ahead, its reply read
        only when needed, so the fork and the import overlap the caller's work. Spares of
        other files, and spares forked before the file changed, are ended.
        """
        self._collect()
        stamp = file_stamp(student_path)
        for path in list(self._spare):
            keep = [(c, st) for c, st in self._spare[path] if path == student_path and st == stamp]
            for child, st in self._spare[path]:
                if (child, st) not in keep:
                    child.kill()  # its import ran student code: end its whole tree
                    child.release()
            self._spare[path] = keep
        if not self._spare.get(student_path):
            self._fork_async(student_path)
            self._collect()
        child, _ = self._spare[student_path].pop(0)
        if student_path in self._spawned:
            self._fork_async(student_path)
        self._spawned.add(student_path)
        return child

    def _fork_async(self, student_path: str) -> None:
        ctl = self._wait_ready()
        conn_parent, conn_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        setup = self._setup(student_path)
        frame = json.dumps({"op": "spawn", **setup}).encode()
        try:
            ctl.settimeout(_REPLY_TIMEOUT)
            socket.send_fds(
                ctl, [struct.pack("<Q", len(frame)), frame], [conn_child.fileno(), out_w]
            )
        except OSError:
            conn_parent.close()
            os.close(out_r)
            self.close()
            raise SandboxError("the sandbox server is gone") from None
        finally:
            conn_child.close()
            os.close(out_w)
        setup["stamp"] = file_stamp(student_path)  # what the child will import
        self._pending.append((student_path, conn_parent, out_r, setup))

    def _collect(self) -> None:
        """Read the replies of spawn requests sent earlier, in order."""
        while self._pending and self._ctl is not None:
            path, conn, out, setup = self._pending.pop(0)
            try:
                pid = int(self._reply("spawn")["pid"])
            except (SandboxError, KeyError, TypeError, ValueError):
                conn.close()
                os.close(out)
                self.close()
                raise SandboxError("the sandbox server did not answer 'spawn'") from None
            host: int | None = pid
            traceback = str(setup["traceback"])
            if self._launcher is not None and self._proc is not None:
                host, traceback = self._launcher.locate(self._proc, pid, traceback)
            output = PipeOutput(out, int(setup["output"]))
            child = Child(pid, conn, output, int(setup["gen"]), traceback, host_pid=host)
            self._spare.setdefault(path, []).append((child, setup["stamp"]))

    def reap(self, child: Child) -> int | None:
        """How the child ended (a wait status), or None if the zygote can't tell."""
        try:
            self._collect()
            send_json(self._wait_ready(), {"op": "reap", "pid": child.pid})
            return int(self._reply("reap")["status"])
        except (SandboxError, OSError, KeyError, TypeError, ValueError):
            self.close()
            return None

    def close(self) -> None:
        """Stop the zygote and any spare child (other children are ended by their sessions).

        The zygote ends every process it forked once its control socket closes, spares
        whose fork reply was never read included.
        """
        for spares in self._spare.values():
            for child, _ in spares:
                child.kill()
                child.release()
        self._spare.clear()
        for _, conn, out, _ in self._pending:
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
