"""The grader's side of the sandbox: one grading run's backend, scratch folder and limits.

`Sandbox` starts a backend (see `launch.py` for how one is chosen): ``fork`` (a zygote that
forks children, `fork.py`) or ``spawn`` (a fresh interpreter per child, `spawn.py`), and
hands out `Session`s (see `session.py`) that serve one student module each. Nothing here
runs student code.

    with Sandbox() as sb:
        session = sb.session("labs/lab04/student.py")
        out = session.call("softmax", x)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from grader.sandbox.cgroup import RunGroup
from grader.sandbox.channel import Child
from grader.sandbox.fork import ForkBackend
from grader.sandbox.launch import choose_backend
from grader.sandbox.limits import DEFAULT_LIMITS, Limits, SandboxError, dump_time, memory_support
from grader.sandbox.session import CallOutcome, Session
from grader.sandbox.spawn import SpawnBackend

# The group holds the zygote and a spare child besides the student's processes, and their
# memory besides the student's allocation.
_GROUP_TASKS = 8
_GROUP_SLACK = 512 * 1024**2
_NICENESS = 10  # of a child where no control group shares the CPU (see `_cpu_fallback`)

__all__ = ["DEFAULT_LIMITS", "CallOutcome", "Limits", "Sandbox", "SandboxError", "Session"]


class Sandbox:
    """The sandbox of one grading run; create sessions with `session(student_path)`.

    Attributes:
        backend: ``"fork"`` or ``"spawn"``: which backend runs the children.
        memory_limited: whether the OS caps a child's memory (`Limits.memory`).
        memory_note: one line saying why not, when it doesn't ("" when it does).
        isolation_note: one line on what this sandbox does not isolate ("" when there is
            nothing to say); the runner adds it to the report's notes.
        workdir: the scratch folder, the children's working directory and TMPDIR.
        cleanup_problem: after `close`, one line if the scratch folder could not be removed.
        group: the control group that caps the processes and memory of all the children
            together, with a CPU quota of `limits.cpus` (`cgroup.RunGroup`), or None where
            none can be made; then RLIMIT_NPROC caps each child's forks, and RLIMIT_CPU and
            a lower priority stand in for the quota.

    Raises:
        SandboxError: an unknown backend (argument or ``$MINILLM_SANDBOX``), or fork where
            this OS cannot fork safely.
    """

    def __init__(
        self,
        limits: Limits = DEFAULT_LIMITS,
        backend: str | None = None,
        *,
        transport: str | None = None,
    ) -> None:
        self.limits = limits
        try:
            self.backend = choose_backend(backend)
        except ValueError as e:
            raise SandboxError(str(e)) from None
        supported, why = memory_support()
        if limits.memory <= 0:
            supported, why = False, "no memory limit was asked for"
        self.memory_limited = supported
        self.memory_note = why
        self.isolation_note = ""
        self.workdir = ""
        self.cleanup_problem = ""
        self.group: RunGroup | None = None
        self._root = ""
        self._gen = 0
        self._impl: ForkBackend | SpawnBackend = (
            ForkBackend(self._setup, self._adopt)
            if self.backend == "fork"
            else SpawnBackend(self._setup, transport, self._adopt)
        )

    def start(self) -> None:
        """Start the backend without waiting for it (it warms up in parallel)."""
        if not self._root:
            self._root = tempfile.mkdtemp(prefix="minillm-sandbox-")
            self.workdir = os.path.join(self._root, "scratch")
            os.mkdir(self.workdir)
            if self.limits.processes > 0 and self.group is None:
                memory = self.limits.memory + _GROUP_SLACK if self.limits.memory > 0 else 0
                self.group, _ = RunGroup.create(
                    self.limits.processes + _GROUP_TASKS, memory, cpus=self.limits.cpus
                )
        self._impl.start()

    def _adopt(self, pid: int) -> None:
        """Put a sandbox process (the zygote, a fresh child) into the run's group before it
        runs anything of the student's; what it forks stays there."""
        if self.group is not None:
            self.group.add(pid)

    def _setup(self, student_path: str) -> dict[str, Any]:
        """What a new child needs to know: its module, limits, folders and generation."""
        self._gen += 1
        return {
            "student": student_path,
            "mem": self.limits.memory,
            "files": self.limits.files,
            "open_files": self.limits.open_files,
            "processes": self.limits.processes,
            "cwd": self.workdir,
            "gen": self._gen,
            "traceback": os.path.join(self._root, f"stack-{self._gen}.txt"),
            "import_dump_at": dump_time(self.limits.timeout),
            "output": self.limits.output,  # the cap on the import's output (the grader's)
            **self._cpu_fallback(),
        }

    def _cpu_fallback(self) -> dict[str, int]:
        """Where no control group shares the CPU out: RLIMIT_CPU and a lower priority for
        each child, so that a busy tree cannot starve the grader and its other sandboxes."""
        if self.group is not None and self.group.cpu_dir:
            return {}
        seconds = self.limits.cpu_seconds or int(self.limits.deadline)
        return {"cpu_seconds": seconds, "niceness": _NICENESS}

    def session(self, student_path: str, deadline: float | None = None) -> Session:
        """A session for `student_path`; its child starts on the first call.

        `deadline`: seconds for the whole session (default `limits.deadline`).
        """
        return Session(self, os.path.abspath(student_path), deadline)

    def spawn(self, student_path: str) -> Child:
        """A child serving `student_path` (`Session` calls this)."""
        self.start()
        return self._impl.spawn(student_path)

    def reap(self, child: Child) -> int | None:
        """How an ended child ended, as a wait status (`Session` calls this)."""
        return self._impl.reap(child)

    def close(self) -> None:
        """Stop the backend and any spare child, and remove the scratch folder.

        If the folder can't be removed (even after making every directory in it writable
        again), `cleanup_problem` says so in one line.
        """
        self._impl.close()
        if self.group is not None:
            self.group.close()  # ends anything that is left, however it got away
            self.group = None
        if self._root:
            self.cleanup_problem = _remove_tree(self._root)
            self._root = self.workdir = ""

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remove_tree(root: str) -> str:
    """Remove `root`, undoing permission games first; "" or a line saying what is left."""
    try:
        os.chmod(root, 0o700)
        for here, dirs, _ in os.walk(root):
            for name in dirs:  # chmod before os.walk descends into it
                path = os.path.join(here, name)
                if not os.path.islink(path):
                    os.chmod(path, 0o700)
    except OSError:
        pass
    shutil.rmtree(root, ignore_errors=True)
    if os.path.lexists(root):
        return f"the sandbox's scratch folder could not be removed: {root}"
    return ""
