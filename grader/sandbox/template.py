"""One warm zygote per graded submission, forking each phase's sandbox (Linux, bwrap).

`minillm grade` gives every phase of a submission (each lab's public tests, then each lab's
hidden ones) a sandbox of its own, so that nothing crosses from one to the next. A fresh
bubblewrap per phase would start a fresh interpreter that imports numpy and the framework
(a tenth of a CPU second, sixteen times for a full submission). A `Template` starts that
interpreter once, under a bubblewrap that mounts every lab folder of the submission and
whose whole file system is read-only; for each phase it forks a zygote in new user, mount,
pid, network, IPC and UTS namespaces, with fresh ``/tmp`` and ``/dev/shm``, the other labs'
folders covered and every capability dropped (`grader.sandbox.nested`, inside). The phase's
`IsolatedSandbox` puts that zygote into its own control group before its first child, as it
does a bubblewrap's, and closing it ends the zygote, whose pid namespace the kernel then
empties.

Where a phase cannot be made (nested user namespaces refused, say) `phase` returns None,
and every later phase gets a bubblewrap of its own, as without a template
(`PhaseLauncher`). The template itself runs nothing of the student's.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from grader.codec import CodecError
from grader.sandbox.bwrap import (
    SCRATCH_BYTES,
    SHM_BYTES,
    BwrapLauncher,
    find_descendant,
    locate_below,
)
from grader.sandbox.launch import Zygote, ZygoteProcess
from grader.sandbox.protocol import recv_json

__all__ = ["PhaseLauncher", "PhaseProcess", "Template"]

_START_TIMEOUT = 60.0
_REPLY_TIMEOUT = 30.0
_NS_LEVEL = 1  # a phase's zygote in NSpid: host, the template's namespace, its own


class PhaseProcess:
    """A phase's zygote, seen from the grader: not its child (the template's), so it is
    watched and signalled through a pidfd where the kernel has them (Linux 5.3), which
    stays bound to that process whatever pid is reused later; elsewhere through its pid
    and its start time, so that a reused pid is never taken for it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._fd: int | None = None
        self._start = _start_time(pid)
        try:
            self._fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pass

    def poll(self) -> int | None:
        """0 once it has ended (the template reaps it and keeps its status), else None."""
        if self.returncode is None and self._ended(0.0):
            self.returncode = 0
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = 0.05 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(f"phase zygote {self.pid}", timeout or 0.0)
            if self._ended(min(left, 0.05)):
                self.returncode = 0
        return 0

    def kill(self) -> None:
        if self.poll() is not None:
            return
        try:
            if self._fd is not None:
                signal.pidfd_send_signal(self._fd, signal.SIGKILL)
            elif _start_time(self.pid) == self._start:  # still that process
                os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass

    def _ended(self, timeout: float) -> bool:
        if self._fd is not None:
            ready, _, _ = select.select([self._fd], [], [], timeout)
            if not ready:
                return False
            os.close(self._fd)
            self._fd = None
            return True
        time.sleep(timeout)
        return not self._start or _start_time(self.pid) != self._start

    def __del__(self) -> None:
        if self._fd is not None:
            os.close(self._fd)


def _start_time(pid: int) -> str:
    """When live process `pid` started (clock ticks since boot, ``/proc/PID/stat``); "" for
    no process, or one that has ended (a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except OSError:
        return ""
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return ""
    return fields[19]


class Template:
    """The template of one submission: reads the course at `course` and every folder of
    `student_dirs`, hides `hide`. Starts at once (or takes the one the grade worker
    prestarted, `grader.sandbox.bwrap.prestart`); `phase` forks a phase; `close` ends it
    and every phase that is left."""

    def __init__(self, course: Path, student_dirs: Sequence[Path], hide: Sequence[Path] = ()):
        self.course = course
        self.student_dirs = [Path(d) for d in dict.fromkeys(student_dirs) if Path(d).is_dir()]
        self.hide = list(hide)
        self.failed = ""  # why phases are not made here ("" while they are)
        self._ready = False
        self._zygote: Zygote | None = None
        self._lock = threading.Lock()  # a phase made ahead, in a thread, and one made again
        try:
            launcher = BwrapLauncher(course, self.student_dirs, self.hide, template=True)
            self._zygote = launcher.launch()
        except OSError as e:
            self.failed = f"the template cannot start: {e}"

    def phase(self, own: Sequence[Path]) -> tuple[PhaseProcess, socket.socket] | None:
        """A new phase that sees the folders `own` of the submission and no other: its
        zygote and the grader's end of its control socket; None (and `failed` says why)
        where the template cannot make it. One phase is made at a time, whatever the thread."""
        with self._lock:
            return self._phase(own)

    def _phase(self, own: Sequence[Path]) -> tuple[PhaseProcess, socket.socket] | None:
        if self.failed or self._zygote is None:
            return None
        proc, ctl = self._zygote
        keep = {Path(d).resolve() for d in own}
        if not keep <= {d.resolve() for d in self.student_dirs}:
            return None  # a folder the template does not read: a bubblewrap of its own
        cover = [str(d) for d in self.student_dirs if d.resolve() not in keep]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        frame = json.dumps(
            {"op": "phase", "tmp": SCRATCH_BYTES, "shm": SHM_BYTES, "cover": cover}
        ).encode()
        try:
            if not self._ready:
                ctl.settimeout(_START_TIMEOUT)
                if recv_json(ctl).get("ready") is not True:
                    raise EOFError("not ready")
                self._ready = True
            ctl.settimeout(_REPLY_TIMEOUT)
            socket.send_fds(ctl, [struct.pack("<Q", len(frame)), frame], [theirs.fileno()])
            reply = recv_json(ctl)
        except (OSError, EOFError, CodecError) as e:
            ours.close()
            self._give_up(f"the template did not answer: {e}")
            return None
        finally:
            theirs.close()
        pid = reply.get("pid")
        host = find_descendant(proc.pid, pid, _NS_LEVEL) if isinstance(pid, int) else None
        if host is None:
            ours.close()
            self._give_up(str(reply.get("error") or "the phase's zygote cannot be found"))
            return None
        return PhaseProcess(host), ours

    def _give_up(self, why: str) -> None:
        self.failed = why or "the template failed"
        self.close()

    def close(self) -> None:
        """End the template: its phases' zygotes end with it (they live in its pid namespace)."""
        if self._zygote is None:
            return
        proc, ctl = self._zygote
        self._zygote = None
        ctl.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class PhaseLauncher:
    """The `grader.sandbox.fork.Launcher` of a phase's sandbox: a zygote forked by
    `template`, seeing `student_dirs` only; or, where the template cannot make one, a
    bubblewrap of its own (`BwrapLauncher`, as without a template)."""

    def __init__(self, template: Template, student_dirs: Sequence[Path]) -> None:
        self.template = template
        self.student_dirs = list(student_dirs)
        self.fallback: BwrapLauncher | None = None

    def launch(self) -> tuple[ZygoteProcess, socket.socket]:
        if self.fallback is None:
            got = self.template.phase(self.student_dirs)
            if got is not None:
                return got
            t = self.template
            self.fallback = BwrapLauncher(t.course, self.student_dirs, t.hide)
        return self.fallback.launch()

    def locate(self, zygote: ZygoteProcess, pid: int, traceback: str) -> tuple[int | None, str]:
        """As `BwrapLauncher.locate`: among the zygote's own descendants only."""
        return locate_below(zygote.pid, pid, traceback)
