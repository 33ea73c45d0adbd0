"""What a sandbox child may use, how a child is ended, and what this OS can enforce.

Where no control group shares the CPU among sandboxes (`cgroup.RunGroup`), a child can be
given RLIMIT_CPU and a lower priority instead (`apply_child_limits`), so that a busy
submission cannot starve the grader's own processes, and the CPU time of its tree can be
read from /proc (`tree_cpu_seconds`).

A leaf module (standard library only): the grader's side (`client`, `session`, the
backends) and the child's side (`zygote`, `child`) both import it, and nothing here imports
them back.
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass

from grader.errors import GraderError

__all__ = [
    "DEFAULT_LIMITS",
    "DUMP_SIGNAL",
    "Limits",
    "SandboxError",
    "apply_child_limits",
    "children_of",
    "dump_time",
    "file_stamp",
    "kill_group",
    "kill_tree",
    "lower_priority",
    "make_undumpable",
    "memory_support",
    "set_dumpable",
    "tree_cpu_seconds",
    "user_tasks",
    "vm_bytes",
]


# Asks a sandbox child to dump its stacks (faulthandler) before it is ended for a timeout.
DUMP_SIGNAL: signal.Signals | None = getattr(signal, "SIGUSR1", None)


class SandboxError(GraderError, RuntimeError):
    """The sandbox machinery itself failed (not the student's code)."""


@dataclass(frozen=True)
class Limits:
    """Limits of a grading run.

    `timeout`: seconds per call (a test may ask for more); `memory`: bytes of address
    space a child may add to what it had after importing numpy and the framework;
    `output`: bytes of stdout+stderr kept per call (more is an overflow); `deadline`:
    seconds for the whole run, after which every call fails at once as a timeout;
    `files`: the largest file a child may write (bytes; SIGXFSZ past it), `open_files`:
    how many descriptors it may hold, `processes`: how many processes and threads the
    student's code may start (0: no limit, for each of the three). The processes are
    capped by a control group where one can be made (`cgroup.RunGroup`, which also caps
    the memory of the whole tree), else by RLIMIT_NPROC (which root ignores).

    `cpus`: the CPUs the whole tree of a sandbox may keep busy at once (the control
    group's CPU quota; 0: no quota); `cpu_seconds`: the CPU seconds each child process
    may use (RLIMIT_CPU, the fallback where no control group shares the CPU; 0: no
    limit).
    """

    timeout: float = 5.0
    memory: int = 2 * 1024**3
    output: int = 64 * 1024
    deadline: float = 120.0
    files: int = 1024**3
    open_files: int = 256
    processes: int = 64
    cpus: float = 1.0
    cpu_seconds: int = 0


DEFAULT_LIMITS = Limits()


def kill_group(pid: int) -> None:
    """SIGKILL process `pid` and the process group it leads (POSIX; a no-op elsewhere)."""
    sigkill = getattr(signal, "SIGKILL", None)
    if sigkill is None:  # Windows: the spawn backend ends its Popen itself
        return
    for kill in (getattr(os, "killpg", None), os.kill):
        if kill is None:
            continue
        try:
            kill(pid, sigkill)
        except (ProcessLookupError, PermissionError):
            pass


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process, from /proc ({} where there is none)."""
    found: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    found[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return found


def children_of(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc; [] elsewhere).

    Reads /proc/PID/task/*/children, which costs only the size of the answer; scans every
    process where the kernel lacks it.
    """
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    try:
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
    except FileNotFoundError:
        if not os.path.exists(f"/proc/{pid}/task/{task}/children"):
            return [child for child, parent in _parents().items() if parent == pid]
    except (OSError, ValueError):
        pass
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL `pid`, its process group and all its descendants, even ones in a new session.

    Descendants are found through /proc (Linux) while `pid` still lives; each is stopped
    first so that none can fork again before the whole tree is killed.
    """
    sigstop = getattr(signal, "SIGSTOP", None)
    if sigstop is not None and os.path.isdir("/proc"):
        stopped: set[int] = set()
        for _ in range(20):
            tree, frontier = set(), [pid]
            while frontier:
                for child in children_of(frontier.pop()):
                    if child not in tree:
                        tree.add(child)
                        frontier.append(child)
            fresh = tree - stopped
            if not fresh:
                break
            for p in fresh:
                try:
                    os.kill(p, sigstop)
                except OSError:
                    pass
            stopped |= fresh
        for p in stopped:
            kill_group(p)
    kill_group(pid)


_PR_SET_DUMPABLE = 4  # linux/prctl.h


def make_undumpable() -> bool:
    """Keep other processes of this user (student code, say) from attaching a debugger to
    this one or reading its memory (Linux `PR_SET_DUMPABLE` 0; elsewhere a no-op)."""
    return set_dumpable(False)


def set_dumpable(dumpable: bool) -> bool:
    """Linux `PR_SET_DUMPABLE`: whether this process may be debugged or read by other
    processes of its user (and its /proc files are its user's, not root's). Whether it was
    set (False where there is no such call)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_DUMPABLE, int(dumpable), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def memory_support() -> tuple[bool, str]:
    """Whether a child's address space can be capped here, and if not, why (one line)."""
    if sys.platform == "win32":
        return False, "Windows has no RLIMIT_AS"
    if sys.platform == "darwin":
        return False, "macOS does not enforce RLIMIT_AS"
    try:
        import resource
    except ImportError:
        return False, "no resource module on this system"
    if not hasattr(resource, "RLIMIT_AS"):
        return False, "this system has no RLIMIT_AS"
    try:  # a no-op set: fails where the call itself is refused (seccomp, some containers)
        resource.setrlimit(resource.RLIMIT_AS, resource.getrlimit(resource.RLIMIT_AS))
    except (OSError, ValueError) as e:
        return False, f"setrlimit(RLIMIT_AS) is refused here ({e})"
    return True, ""


def vm_bytes() -> int:
    """This process's current address-space size in bytes (0 where it can't be read)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 0


_CPU_GRACE = 5  # seconds from RLIMIT_CPU's SIGXCPU to its SIGKILL


def apply_child_limits(
    mem_bytes: int,
    file_bytes: int = 0,
    open_files: int = 256,
    processes: int = 0,
    cpu_seconds: int = 0,
    niceness: int = 0,
) -> bool:
    """Limit this child process: no core dumps; if > 0, `mem_bytes` of address space on top
    of what it uses now, files of at most `file_bytes`, at most `open_files` descriptors,
    at most `processes` more processes and threads of this user (RLIMIT_NPROC, which
    counts every process of the user; root is not bound by it), `cpu_seconds` of CPU time
    (RLIMIT_CPU: SIGXCPU then, SIGKILL `_CPU_GRACE` seconds later; each process it forks
    starts a count of its own) and a nice value of at least `niceness` for every thread
    (`lower_priority`).

    Returns whether the memory cap is in force. Limits this OS refuses are skipped.
    """
    if niceness > 0:
        lower_priority(niceness)
    try:
        import resource
    except ImportError:  # Windows
        return False
    wanted: list[tuple[int, int]] = [(resource.RLIMIT_CORE, 0)]
    as_limit = getattr(resource, "RLIMIT_AS", None)
    if mem_bytes > 0 and as_limit is not None and sys.platform != "darwin":
        wanted.append((as_limit, vm_bytes() + mem_bytes))
    if file_bytes > 0:
        wanted.append((resource.RLIMIT_FSIZE, file_bytes))
    if open_files > 0:
        wanted.append((resource.RLIMIT_NOFILE, open_files))
    nproc = getattr(resource, "RLIMIT_NPROC", None)
    if processes > 0 and nproc is not None and os.geteuid() != 0:
        wanted.append((nproc, user_tasks() + processes))
    cpu_limit = getattr(resource, "RLIMIT_CPU", None)
    if cpu_seconds > 0 and cpu_limit is not None:
        wanted.append((cpu_limit, cpu_seconds))
    capped = False
    for which, value in wanted:
        try:
            _, hard = resource.getrlimit(which)
            top = value + _CPU_GRACE if which == cpu_limit else value
            if hard != resource.RLIM_INFINITY:
                value, top = min(value, hard), min(top, hard)
            resource.setrlimit(which, (value, top))
            capped = capped or which == as_limit
        except (OSError, ValueError):  # not enforceable on this system
            pass
    return capped


def lower_priority(niceness: int = 10) -> bool:
    """Give this process a nice value of at least `niceness` (never a higher priority), so
    that it cannot starve the grader's processes (POSIX; a no-op elsewhere).

    On Linux a nice value belongs to a thread: every thread running now is lowered (numpy
    may have started some), and threads started later inherit it. Returns whether it
    worked.
    """
    get = getattr(os, "getpriority", None)
    set_ = getattr(os, "setpriority", None)
    which = getattr(os, "PRIO_PROCESS", None)
    if os.name != "posix" or get is None or set_ is None or which is None or niceness <= 0:
        return False
    tids = [0]
    if sys.platform.startswith("linux"):
        try:
            tids = [int(t) for t in os.listdir("/proc/self/task")]
        except (OSError, ValueError):
            tids = [0]
    ok = True
    for tid in tids:
        try:
            if get(which, tid) < niceness:
                set_(which, tid, niceness)
        except OSError:  # a system that refuses, or a thread that ended meanwhile
            if tid == 0 or os.path.exists(f"/proc/self/task/{tid}"):
                ok = False
    return ok


def _cpu_ticks(pid: int) -> int | None:
    """utime + stime + cutime + cstime of process `pid`, in clock ticks (None: unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11:15])
    except (OSError, IndexError, ValueError):
        return None


def tree_cpu_seconds(pid: int) -> float | None:
    """The CPU time (seconds) used by process `pid` and its live descendants, with the
    ended children each of them waited for (Linux /proc; None elsewhere, or once `pid` is
    gone). Orphans adopted outside the tree, and what they use, are not counted."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        tick = os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError, AttributeError):
        return None
    total = _cpu_ticks(pid)
    if total is None or tick <= 0:
        return None
    seen, frontier = {pid}, [pid]
    while frontier:
        for child in children_of(frontier.pop()):
            if child not in seen:
                seen.add(child)
                frontier.append(child)
                total += _cpu_ticks(child) or 0
    return total / tick


def user_tasks() -> int:
    """How many processes and threads this user runs now (what RLIMIT_NPROC counts; from
    /proc on Linux, a guess of 1024 elsewhere)."""
    uid = os.getuid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 1024
    total = 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/stat") as f:
                total += int(f.read().rsplit(")", 1)[1].split()[17])  # num_threads
        except (OSError, IndexError, ValueError):
            continue
    return max(total, 1)


def dump_time(limit: float) -> float:
    """When a child dumps its stacks during a request with time `limit`: just before it ends."""
    return max(limit - 1.0, 0.5 * limit)


def file_stamp(path: str) -> bytes:
    """A digest of a file's content (empty when unreadable): a spare child forked for an
    older content of the student's file must not serve the new one. Anything but a regular
    file (a FIFO the student's code put there, say) is unreadable: it is never waited on."""
    import hashlib
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.digest()
    except OSError:
        return b""
    finally:
        os.close(fd)
