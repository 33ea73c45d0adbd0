"""A control group for one sandbox's processes, where this system lets us make one.

Resource limits (`limits.apply_child_limits`) cap each process on its own: a child that
forks 30 times may use 30 times its memory limit, and RLIMIT_NPROC, which counts a
user's processes, does nothing for root (CAP_SYS_RESOURCE). A control group caps the
whole tree of a sandbox at once: ``pids.max`` processes and threads, ``memory`` bytes in
all, and, where the ``cpu`` controller can be had, a CPU share of its own (a quota of
``cpus`` CPUs, ``cpu.max`` or ``cpu.cfs_quota_us``, and the default weight of one
sibling, ``cpu.weight`` or ``cpu.shares``), so that busy orphans of one submission cannot
starve a sandbox graded beside it. `RunGroup.cpu_seconds` tells the CPU time that the
group's processes, live or ended, have used (``cpu.stat`` or ``cpuacct.usage``).

`RunGroup.create` makes one under the cgroup v2 tree (a subgroup of this process's own
group, when its controllers are delegated to us) or under the v1 ``pids`` and ``memory``
hierarchies (plus ``cpu`` and ``cpuacct``, one mount or two), each a subgroup of this
process's own group in that hierarchy (read from ``/proc/self/cgroup``), so that the
sandbox stays inside whatever limits the grader runs under. The CPU controller is
optional: without it the group caps processes and memory only, and `create`'s note says
the CPU is not shared. Where no group can be written (an ordinary user without
delegation, macOS, Windows) `create` returns None and says why; then RLIMIT_NPROC caps
the forks instead, and RLIMIT_CPU and a lower priority can stand in for the CPU share
(`limits.apply_child_limits`, measured by `limits.tree_cpu_seconds`).

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
_PERIOD = 100_000  # µs: the CFS period of a group's CPU quota
_MIN_QUOTA = 1_000  # µs: the smallest quota the kernel takes
_counter = 0


@dataclass
class RunGroup:
    """The cgroup directories of one sandbox (one for v2, one per hierarchy for v1).

    `cpu_dir`: the directory that holds its CPU share ("" where the CPU is not shared);
    `acct_dir`: the one its CPU time is read from ("" where it cannot be measured);
    `cpus`: the CPU quota in force (0: none); `cpu_note`: why the CPU is not shared or
    not measured ("" when it is both).
    """

    dirs: list[str]
    version: int
    cpu_dir: str = ""
    acct_dir: str = ""
    cpus: float = 0.0
    cpu_note: str = ""

    @staticmethod
    def create(processes: int, memory: int, cpus: float = 1.0) -> tuple[RunGroup | None, str]:
        """A new group capped at `processes` tasks, `memory` bytes and `cpus` CPUs (0: no
        cap, for each), or (None, why) where this system does not let us make one.

        The note is "" when the group is made with a CPU share and CPU accounting, else it
        says what of those is missing (the group then caps processes and memory only)."""
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
                _add_cpu_v2(group, v2, cpus)
                return group, group.cpu_note
        v1 = _v1_parents()
        needed = list(dict.fromkeys(v1[c] for c in ("pids", "memory") if c in v1))
        if (
            "pids" in v1
            and "memory" in v1
            and all(os.path.isfile(os.path.join(d, "cgroup.procs")) for d in needed)
        ):
            for d in needed:
                _sweep(d)
            group = _make(RunGroup([os.path.join(d, name) for d in needed], 1), processes, memory)
            if group is not None:
                _add_cpu_v1(group, v1, name, cpus)
                return group, group.cpu_note
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

    def cpu_seconds(self) -> float | None:
        """The CPU time (user and system, seconds) used so far by every process that is or
        was in the group since it joined; None where it cannot be measured."""
        if not self.acct_dir:
            return None
        try:
            if self.version == 2:
                with open(os.path.join(self.acct_dir, "cpu.stat")) as f:
                    for line in f:
                        key, _, value = line.partition(" ")
                        if key == "usage_usec":
                            return int(value) / 1e6
                return None
            with open(os.path.join(self.acct_dir, "cpuacct.usage")) as f:
                return int(f.read()) / 1e9
        except (OSError, ValueError):
            return None

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


def _v1_parents(cgroups: str | None = None, mountinfo: str | None = None) -> dict[str, str]:
    """Controller name -> the directory of this process's own group in the v1 hierarchy
    that holds it (two names share a directory where one hierarchy holds both, as
    ``cpu,cpuacct``); {} where there is no v1 hierarchy. `cgroups` and `mountinfo`: the
    text of /proc/self/cgroup and /proc/self/mountinfo (read when not given)."""
    if cgroups is None:
        cgroups = _read("/proc/self/cgroup")
    mounts = _v1_mounts(_read("/proc/self/mountinfo") if mountinfo is None else mountinfo)
    found: dict[str, str] = {}
    for line in cgroups.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[1]:
            continue  # the v2 line ("0::/path") or a malformed one
        names = frozenset(parts[1].split(","))
        rel = parts[2]
        place = next((m for key, m in mounts.items() if names <= key), None)
        if place is None:  # no mount table: the usual place of a hierarchy
            first = os.path.join(_ROOT, parts[1])
            place = (first, "/") if os.path.isdir(first) else None
        if place is None or ".." in rel.split("/"):  # outside our cgroup namespace
            continue
        point, root = place
        if root != "/":  # a subtree is mounted (a container): our path is below its root
            if rel != root and not rel.startswith(root.rstrip("/") + "/"):
                continue
            rel = rel[len(root) :]
        path = os.path.normpath(os.path.join(point, rel.lstrip("/")))
        for n in names:
            found[n] = path
    return found


def _v1_mounts(mountinfo: str) -> dict[frozenset[str], tuple[str, str]]:
    """The controllers of each mounted v1 hierarchy -> (mount point, root of the mount),
    from the text of /proc/self/mountinfo."""
    found: dict[frozenset[str], tuple[str, str]] = {}
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        sep = fields.index("-")
        if len(fields) < sep + 4 or sep < 5 or fields[sep + 1] != "cgroup":
            continue
        names = frozenset(o for o in fields[sep + 3].split(",") if o not in ("rw", "ro"))
        root, point = fields[3], fields[4].replace("\\040", " ")
        found.setdefault(names, (point, root))  # the first mount of a hierarchy
    return found


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


def _quota(cpus: float) -> int:
    """The CFS quota (µs per `_PERIOD`) of `cpus` CPUs."""
    return max(_MIN_QUOTA, round(cpus * _PERIOD))


def _add_cpu_v2(group: RunGroup, parent: str, cpus: float) -> None:
    """Give a new v2 group its CPU share (enabling the controller for our subgroups if our
    own group has it) and its CPU accounting (``cpu.stat``, there in every v2 group)."""
    d = group.dirs[0]
    group.acct_dir = d if os.path.isfile(os.path.join(d, "cpu.stat")) else ""
    if not os.path.isfile(os.path.join(d, "cpu.max")):  # the new group gets it at once
        _write(os.path.join(parent, "cgroup.subtree_control"), "+cpu")
    if not os.path.isfile(os.path.join(d, "cpu.max")):
        group.cpu_note = "CPU is not shared: the cgroup cpu controller is not delegated to us"
    else:
        limit = f"{_quota(cpus)} {_PERIOD}" if cpus > 0 else f"max {_PERIOD}"
        if _write(os.path.join(d, "cpu.max"), limit):
            _write(os.path.join(d, "cpu.weight"), "100")
            group.cpu_dir, group.cpus = d, max(cpus, 0.0)
        else:
            group.cpu_note = "CPU is not shared: cpu.max cannot be written"
    if not group.acct_dir:
        group.cpu_note = _join(group.cpu_note, "CPU time is not measured: no cpu.stat")


def _add_cpu_v1(group: RunGroup, parents: dict[str, str], name: str, cpus: float) -> None:
    """Give a new v1 group its CPU share (the ``cpu`` hierarchy) and its CPU accounting
    (``cpuacct``), each a subgroup of ours; what cannot be made is left out, with a note."""
    cpu_parent, acct_parent = parents.get("cpu", ""), parents.get("cpuacct", "")
    for parent in dict.fromkeys(p for p in (cpu_parent, acct_parent) if p):
        _sweep(parent)
    cpu_note = "CPU is not shared: no cgroup v1 cpu hierarchy can be written"
    if cpu_parent and os.path.isfile(os.path.join(cpu_parent, "cpu.cfs_quota_us")):
        d = os.path.join(cpu_parent, name)
        if _mkdir(d):
            got = _set_v1_cpu(d, cpu_parent, cpus)
            if got is None:
                _rmdir(d)
                cpu_note = "CPU is not shared: the cgroup v1 CPU quota cannot be set"
            else:
                group.dirs.append(d)
                group.cpu_dir, group.cpus, cpu_note = d, got, ""
    acct_note = "CPU time is not measured: no cgroup v1 cpuacct hierarchy can be written"
    if acct_parent and os.path.isfile(os.path.join(acct_parent, "cpuacct.usage")):
        d = os.path.join(acct_parent, name)
        if d in group.dirs or _mkdir(d):  # one directory where cpu and cpuacct are one
            if d not in group.dirs:
                group.dirs.append(d)
            group.acct_dir, acct_note = d, ""
    group.cpu_note = _join(cpu_note, acct_note)


def _set_v1_cpu(d: str, parent: str, cpus: float) -> float | None:
    """Set the quota (`cpus` CPUs, 0: none) and the shares of v1 group `d`: the CPUs in
    force (capped at what the groups above allow, as the kernel wants), or None."""
    if not _write(os.path.join(d, "cpu.shares"), "1024"):  # one sibling's share
        return None
    if cpus <= 0:
        return 0.0
    if not _write(os.path.join(d, "cpu.cfs_period_us"), str(_PERIOD)):
        return None
    if _write(os.path.join(d, "cpu.cfs_quota_us"), str(_quota(cpus))):
        return cpus
    cap = _v1_cpu_cap(parent)  # EINVAL: more than an ancestor's quota
    if (
        cap is not None
        and cap < cpus
        and _write(os.path.join(d, "cpu.cfs_quota_us"), str(_quota(cap)))
    ):
        return cap
    return None


def _v1_cpu_cap(d: str) -> float | None:
    """The smallest CPU quota of v1 group `d` and the groups above it (None: no quota)."""
    cap: float | None = None
    while os.path.isfile(os.path.join(d, "cpu.cfs_quota_us")):
        try:
            with open(os.path.join(d, "cpu.cfs_quota_us")) as f:
                quota = int(f.read())
            with open(os.path.join(d, "cpu.cfs_period_us")) as f:
                period = int(f.read())
        except (OSError, ValueError):
            break
        if quota > 0 and period > 0:
            cap = quota / period if cap is None else min(cap, quota / period)
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    return cap


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _mkdir(path: str) -> bool:
    try:
        os.mkdir(path, 0o755)
        return True
    except OSError:
        return False


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
