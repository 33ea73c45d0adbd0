"""A control group for one sandbox's processes, where this system lets us make one.

Resource limits (`limits.apply_child_limits`) cap each process on its own: a child that
forks 30 times may use 30 times its memory limit, and RLIMIT_NPROC, which counts a
user's processes, does nothing for root (CAP_SYS_RESOURCE). A control group caps the
whole tree of a sandbox at once: ``pids.max`` processes and threads, ``memory`` bytes in
all. `RunGroup.create` makes one under the cgroup v2 tree (a subgroup of this process's own
group, when its controllers are delegated to us) or under the v1 ``pids`` and ``memory``
hierarchies; where neither can be written (an ordinary user without delegation, macOS,
Windows) it returns None and says why, and RLIMIT_NPROC caps the forks instead.

The grader adds each sandbox process (the zygote, a spawned child) with `add` before that
process runs anything of the student's; everything it forks stays in the group. `close`
kills what is left in it and removes it.

A leaf module (standard library only), like `limits`.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

__all__ = ["RunGroup"]

_ROOT = "/sys/fs/cgroup"
_counter = 0


@dataclass
class RunGroup:
    """The cgroup directories of one sandbox (one for v2, one per controller for v1)."""

    dirs: list[str]
    version: int

    @staticmethod
    def create(processes: int, memory: int) -> tuple[RunGroup | None, str]:
        """A new group capped at `processes` tasks and `memory` bytes (0: no cap), or
        (None, why) where this system does not let us make one."""
        if not os.path.isdir(_ROOT) or os.name != "posix":
            return None, "no cgroup file system here"
        global _counter
        _counter += 1
        name = f"minillm-{os.getpid()}-{_counter}"
        v2 = _v2_parent()
        if v2 is not None:
            _sweep(v2)
            group = _make(RunGroup([os.path.join(v2, name)], 2), processes, memory)
            if group is not None:
                return group, ""
        v1 = [os.path.join(_ROOT, c) for c in ("pids", "memory")]
        if all(os.path.isfile(os.path.join(d, "cgroup.procs")) for d in v1):
            for d in v1:
                _sweep(d)
            group = _make(RunGroup([os.path.join(d, name) for d in v1], 1), processes, memory)
            if group is not None:
                return group, ""
        return None, "no cgroup with pids and memory controllers can be made by this user"

    def add(self, pid: int) -> bool:
        """Move process `pid` into the group (whether that worked)."""
        ok = True
        for d in self.dirs:
            ok = _write(os.path.join(d, "cgroup.procs"), str(pid)) and ok
        return ok

    def pids(self) -> list[int]:
        """Every process in the group now."""
        found: set[int] = set()
        for d in self.dirs:
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    found.update(int(p) for p in f.read().split())
            except (OSError, ValueError):
                continue
        return sorted(found)

    def peak_memory(self) -> int:
        """The most memory the group used at once (bytes; 0 where unknown)."""
        names = ("memory.peak",) if self.version == 2 else ("memory.max_usage_in_bytes",)
        for d in self.dirs:
            for n in names:
                try:
                    with open(os.path.join(d, n)) as f:
                        return int(f.read().split()[0])
                except (OSError, ValueError, IndexError):
                    continue
        return 0

    def close(self, budget: float = 5.0) -> None:
        """Kill every process left in the group (stopped first, so none forks meanwhile),
        then remove the group."""
        deadline = time.monotonic() + budget
        while time.monotonic() < deadline:
            left = self.pids()
            if not left:
                break
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for pid in left:
                    try:
                        os.kill(pid, sig)
                    except OSError:
                        pass
            time.sleep(0.01)
        for d in self.dirs:
            for _ in range(50):  # the kernel lets a group go once its last task is reaped
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _v2_parent() -> str | None:
    """This process's own v2 group, if it delegates pids and memory to subgroups we may
    create; None otherwise."""
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    rel = next((line[3:] for line in lines if line.startswith("0::")), None)
    if rel is None:
        return None
    base = _ROOT if os.path.isfile(os.path.join(_ROOT, "cgroup.controllers")) else None
    if base is None:
        return None
    parent = os.path.join(base, rel.lstrip("/"))
    try:
        with open(os.path.join(parent, "cgroup.subtree_control")) as f:
            enabled = set(f.read().split())
    except OSError:
        return None
    if not {"pids", "memory"} <= enabled or not os.access(parent, os.W_OK):
        return None
    return parent


def _sweep(parent: str) -> None:
    """Remove the empty groups of runs whose grader is gone (killed before it could)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) != 3 or parts[0] != "minillm" or not parts[1].isdigit():
            continue
        if not os.path.exists(f"/proc/{parts[1]}"):
            _rmdir(os.path.join(parent, name))  # fails, harmlessly, while tasks remain


def _make(group: RunGroup, processes: int, memory: int) -> RunGroup | None:
    made: list[str] = []
    try:
        for d in group.dirs:
            os.mkdir(d, 0o755)
            made.append(d)
    except OSError:
        for d in made:
            _rmdir(d)
        return None
    ok = True
    for d in group.dirs:
        if processes > 0 and os.path.isfile(os.path.join(d, "pids.max")):
            ok = _write(os.path.join(d, "pids.max"), str(processes)) and ok
        if memory > 0:
            name = "memory.max" if group.version == 2 else "memory.limit_in_bytes"
            if os.path.isfile(os.path.join(d, name)):
                ok = _write(os.path.join(d, name), str(memory)) and ok
    if not ok:
        for d in made:
            _rmdir(d)
        return None
    return group


def _write(path: str, text: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(text)
        return True
    except OSError:
        return False


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass
