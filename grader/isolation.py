"""Isolation for grading: the student's code runs under bubblewrap (trust level 2).

`minillm grade` is a trust boundary: what a submission does must not change its grade,
another submission's, or the grader. `verify` and the other commands on the student's own
machine only keep honest mistakes from corrupting their verdicts (see `grader.guard`).
Here every submission's sandbox runs in namespaces of its own, made by bubblewrap
(``bwrap``, the sandbox Flatpak uses; Debian and Ubuntu package ``bubblewrap``):

- new user, pid, mount, network, IPC and UTS namespaces: the code runs as a uid that is
  not the grader's, sees no other process, no network and no host name of ours;
- a root file system made only of read-only binds: the system's ``/usr``, the Python
  installation and virtualenv, the course's ``framework/`` and ``grader/`` packages and the
  folder of the student files being graded. ``solutions/``, the hidden checks, the rest
  of the course and the other submissions are not mounted at all;
- a size-capped tmpfs as ``/tmp`` (the scratch folder, HOME and TMPDIR) and ``/dev/shm``;
- ``--die-with-parent`` and ``--new-session``: nothing outlives the grader, nothing reaches
  its terminal. The run's control group (`grader.sandbox.cgroup`), where one can be made,
  caps the processes and memory of the whole sandbox.

The grader itself stays outside. Only the sandbox's zygote (`grader.sandbox.zygote`) runs
inside, connected by the control socket it inherits; each child's socket and output pipe
cross that socket as descriptors, as always. The grader reads nothing from the submission
but those replies (decoded within budgets, `grader.codec`) and, after a timeout, the
child's stack dump, opened through ``/proc/PID/root`` without following links or
blocking. The pids the zygote reports are those of its own namespace: the grader finds
the matching processes among the sandbox's own descendants before it signals anything.

`unavailable()` says why isolation cannot run here (bwrap missing, user namespaces off)
and how to fix it; `minillm grade` then refuses to run unless ``--no-isolation`` is given.
`IsolatedBackend` is the grade backend; `IsolatedSandbox` is also what
``minillm verify --isolated`` uses, so that anyone can watch their code run under it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from grader.grade.checks import load_graded_lab
from grader.grade.run import GradeJob
from grader.grade.submission import student_path
from grader.labs import LabInfo
from grader.results import LabResult
from grader.runner import run_tests
from grader.sandbox.client import Sandbox
from grader.sandbox.fork import ForkBackend
from grader.sandbox.launch import Zygote, child_env
from grader.sandbox.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "SCRATCH",
    "IsolatedBackend",
    "IsolatedSandbox",
    "bwrap_command",
    "unavailable",
]

SCRATCH = "/tmp"  # inside the sandbox: a tmpfs, the children's working folder and HOME
SCRATCH_BYTES = 256 * 1024**2
SHM_BYTES = 64 * 1024**2
_SANDBOX_UID = 65534  # "nobody" inside the user namespace
_INSTALL = (
    "minillm grade runs every submission under bubblewrap (bwrap), which is not installed "
    "here. Install it: sudo apt-get install bubblewrap (Debian, Ubuntu), "
    "sudo dnf install bubblewrap (Fedora), sudo pacman -S bubblewrap (Arch)"
)
_USERNS = (
    "bubblewrap (bwrap) cannot create its namespaces here{detail}. Unprivileged user "
    "namespaces may be switched off: sudo sysctl -w kernel.unprivileged_userns_clone=1 "
    "(Debian), or user.max_user_namespaces > 0; on Ubuntu 24.04 allow bwrap in AppArmor "
    "(kernel.apparmor_restrict_unprivileged_userns=0); in a container, run it with "
    "--privileged or a seccomp profile that allows unshare"
)


def _bwrap() -> str | None:
    return shutil.which("bwrap")


@cache
def unavailable() -> str | None:
    """None when bubblewrap runs here with every namespace `minillm grade` needs; else one
    message that says what is missing and how to install or enable it."""
    if not sys.platform.startswith("linux"):
        return f"isolation needs Linux namespaces (bubblewrap); this is {sys.platform}"
    exe = _bwrap()
    if exe is None:
        return _INSTALL
    probe = [exe, *_namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return _USERNS.format(detail=f" ({e})")
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return _USERNS.format(detail=f" ({detail[0]})")
    return None


def _namespaces() -> list[str]:
    uid = _SANDBOX_UID if os.getuid() != _SANDBOX_UID else _SANDBOX_UID - 1
    return [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--uid",
        str(uid),
        "--gid",
        str(uid),
        "--die-with-parent",
        "--new-session",
    ]


def _system_binds() -> list[str]:
    """``/usr`` read-only, and ``/bin``, ``/lib``... as they are on this host (links into
    ``/usr`` on a merged-usr system, read-only binds elsewhere)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives"):
        args += ["--ro-bind-try", etc, etc]
    return args


def _python_dirs() -> list[str]:
    """The folders the interpreter needs: its installation and the virtualenv (with the
    folder of every link on the way to the executable)."""
    found: list[str] = []
    exe = sys.executable
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    for _ in range(8):  # the chain of links venv/bin/python -> python3 -> /opt/.../python3
        candidates.append(os.path.dirname(os.path.abspath(exe)))
        if not os.path.islink(exe):
            break
        exe = os.path.join(os.path.dirname(exe), os.readlink(exe))
    for path in candidates:
        path = os.path.abspath(path)
        if path == "/" or path.startswith("/usr/") or path == "/usr":
            continue
        if not any(path == f or path.startswith(f + os.sep) for f in found):
            found = [f for f in found if not f.startswith(path + os.sep)] + [path]
    return found


def bwrap_command(
    course: Path,
    student_dirs: Sequence[Path],
    argv: Sequence[str],
    *,
    env: dict[str, str],
    scratch_bytes: int = SCRATCH_BYTES,
) -> list[str]:
    """The bwrap command line that runs `argv` isolated (see the module docstring).

    `course` is the folder that holds ``framework/`` and ``grader/`` (mounted read-only,
    nothing else of it); `student_dirs` are mounted read-only at their own paths; `env` is
    the whole environment inside.
    """
    exe = _bwrap() or "bwrap"
    args = [exe, *_namespaces(), *_system_binds()]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(scratch_bytes), "--tmpfs", SCRATCH]
    args += ["--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    for path in _python_dirs():
        args += ["--ro-bind", path, path]
    for package in ("framework", "grader"):
        path = str(course / package)
        args += ["--ro-bind", path, path]
    for folder in dict.fromkeys(str(d) for d in student_dirs):
        args += ["--ro-bind", folder, folder]
    args += ["--hostname", "minillm-sandbox", "--chdir", SCRATCH, "--clearenv"]
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    return [*args, "--", *argv]


def _sandbox_env(course: Path) -> dict[str, str]:
    env = child_env()
    for key in ("HOME", "USER", "LOGNAME", "VIRTUAL_ENV", "TMP", "TEMP"):
        env.pop(key, None)
    env.update(
        PATH="/usr/local/bin:/usr/bin:/bin",
        HOME=SCRATCH,
        TMPDIR=SCRATCH,
        PYTHONPATH=str(course),
        PYTHONNOUSERSITE="1",
    )
    return env


def _ns_pids(pid: int) -> list[int]:
    """The pids of host process `pid` in every pid namespace it is in, outermost first."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return [int(p) for p in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


class _BwrapLauncher:
    """Starts the zygote under bubblewrap and finds its children from outside."""

    def __init__(
        self,
        course: Path,
        student_dirs: Sequence[Path],
        join_group: Callable[[int], bool] | None,
    ) -> None:
        self.course = course
        self.student_dirs = list(student_dirs)
        self.join_group = join_group

    def launch(self) -> Zygote:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv = [sys.executable, "-m", "grader.sandbox.zygote", str(child.fileno())]
        cmd = bwrap_command(self.course, self.student_dirs, argv, env=_sandbox_env(self.course))
        join = self.join_group

        def enter_group() -> None:  # in the new process, before bwrap forks anything
            if join is not None:
                join(os.getpid())

        proc = subprocess.Popen(
            cmd,
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=enter_group if join is not None else None,
        )
        child.close()
        return proc, parent

    def locate(
        self, zygote: subprocess.Popen[bytes], pid: int, traceback: str
    ) -> tuple[int | None, str]:
        """The host pid of the sandbox process that calls itself `pid`, among bwrap's own
        descendants only (a zygote that lies cannot point the grader at anything else)."""
        from grader.sandbox.limits import children_of

        seen: set[int] = set()
        frontier = [zygote.pid]
        while frontier:
            for host in children_of(frontier.pop()):
                if host in seen:
                    continue
                seen.add(host)
                frontier.append(host)
                ns = _ns_pids(host)
                if len(ns) >= 2 and ns[-1] == pid:
                    dump = f"/proc/{host}/root{traceback}" if traceback else ""
                    return host, dump
        return None, ""


class IsolatedSandbox(Sandbox):
    """A `Sandbox` whose zygote runs under bubblewrap (fork backend only).

    `course` holds the ``framework/`` and ``grader/`` the student's code may import;
    `student_dirs` are the folders of the files it will serve (read-only inside).
    """

    def __init__(
        self,
        course: Path,
        student_dirs: Sequence[Path],
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        super().__init__(limits, backend="fork")
        self.backend = "bwrap"
        self.course = course
        launcher = _BwrapLauncher(course, student_dirs, self._join_group)
        self._impl = ForkBackend(self._setup, self._adopt, launcher)

    def _join_group(self, pid: int) -> bool:
        return self.group is not None and self.group.add(pid)

    def _setup(self, student_path: str) -> dict[str, object]:
        setup = super()._setup(student_path)
        setup["cwd"] = SCRATCH
        setup["traceback"] = f"{SCRATCH}/.minillm-stack-{setup['gen']}.txt"
        return setup


class IsolatedBackend:
    """The grade backend (see `grader.grade.run`): one isolated sandbox per submission,
    which sees the course copy's packages and this submission's files, nothing else."""

    isolated = True

    def run(self, job: GradeJob, on_result: Callable[[LabResult], None]) -> None:
        with IsolatedSandbox(job.course, [job.work]) as sandbox:
            for lab_id in job.labs:
                info = LabInfo(lab_id, job.course / "labs" / lab_id)
                lab = load_graded_lab(info, solutions=job.private)
                result = run_tests(lab, job.student(lab_id), sandbox)
                result.impl = student_path(lab_id)
                on_result(result)
