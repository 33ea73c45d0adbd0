"""Bubblewrap: the command line that isolates the sandbox's zygote, and its launcher.

The how of `grader.sandbox.isolated` (which says why and what), with nothing but the standard
library imported, so that `minillm verify --isolated` and the grade worker can start the
isolated zygote at the very beginning of a run (`prestart`), while the grader imports the
rest of itself.

`bwrap_command` builds the command line; `BwrapLauncher` starts the zygote with it and,
as the fork backend's `Launcher`, finds the zygote's children from outside: the pids the
zygote reports are those of its own pid namespace, so each is looked up (``NSpid`` in
``/proc/PID/status``) among bwrap's own descendants only, and a stack dump is read through
``/proc/HOSTPID/root``. `unavailable` says why bwrap cannot run here and how to fix it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from grader.sandbox.launch import Zygote, ZygoteProcess, child_env
from grader.sandbox.limits import children_of

__all__ = [
    "SCRATCH",
    "BwrapLauncher",
    "bwrap_command",
    "find_descendant",
    "locate_below",
    "namespaces",
    "prestart",
    "prestart_verify",
    "take_prestarted",
    "unavailable",
]

SCRATCH = "/tmp"  # inside the sandbox: a tmpfs, the children's working folder and HOME
SCRATCH_BYTES = 256 * 1024**2
SHM_BYTES = 64 * 1024**2
_SANDBOX_UID = 65534  # "nobody" inside the user namespace
_INSTALL = (
    "isolated runs (minillm grade, verify --isolated) use bubblewrap (bwrap), which is not "
    "installed here. Install it: sudo apt-get install bubblewrap (Debian, Ubuntu), "
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
    probe = [exe, *namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return _USERNS.format(detail=f" ({e})")
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return _USERNS.format(detail=f" ({detail[0]})")
    return None


def namespaces() -> list[str]:
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
    """The folders the interpreter needs: its installation, the virtualenv, the folder of
    every link on the way to the executable, and every folder on `sys.path` (site-packages,
    and what a .pth file adds) except a course's own: one holding ``solutions/``, or
    ``grader/`` and ``labs/``, is never mounted whole (its packages are mounted one by one).
    Folders under ``/usr`` are included (see `_visible`)."""
    exe = sys.executable
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    for _ in range(8):  # the chain of links venv/bin/python -> python3 -> /opt/.../python3
        candidates.append(os.path.dirname(os.path.abspath(exe)))
        if not os.path.islink(exe):
            break
        exe = os.path.join(os.path.dirname(exe), os.readlink(exe))
    candidates += [p for p in sys.path if p and os.path.isdir(p) and not _is_course(p)]
    found: list[str] = []
    for path in candidates:
        path = os.path.abspath(path)
        if path in ("/", "/usr") or _is_course(path):
            continue
        if not any(path == f or path.startswith(f + os.sep) for f in found):
            found = [f for f in found if not f.startswith(path + os.sep)] + [path]
    return found


def _is_course(path: str) -> bool:
    """A folder of the course (not a site-packages that holds the installed grader)."""
    has = [os.path.isdir(os.path.join(path, name)) for name in ("solutions", "grader", "labs")]
    return has[0] or (has[1] and has[2])


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _masks(hide: Sequence[Path]) -> list[str]:
    """The folders of `hide` that the system binds would show (under ``/usr``, or a folder
    linked to it): each gets an empty tmpfs over it."""
    found = []
    for folder in hide:
        path = os.path.abspath(folder)
        real = os.path.realpath(folder)
        if path in ("/", "/usr") or real in ("/", "/usr"):
            continue
        if _under(path, "/usr") or _under(real, "/usr"):
            found += [p for p in dict.fromkeys((path, real)) if _under(p, "/usr")]
    return list(dict.fromkeys(found))


def bwrap_command(
    course: Path,
    student_dirs: Sequence[Path],
    argv: Sequence[str],
    *,
    env: dict[str, str],
    scratch_bytes: int = SCRATCH_BYTES,
    hide: Sequence[Path] = (),
    read_only: bool = False,
) -> list[str]:
    """The bwrap command line that runs `argv` isolated (see the module docstring).

    `course` is the folder that holds ``framework/`` and ``grader/`` (mounted read-only,
    nothing else of it); `student_dirs` are mounted read-only at their own paths; `env` is
    the whole environment inside. `hide` are folders that must stay out of sight wherever
    they are (the instructor's course with its ``solutions/``, the result files): one
    under ``/usr``, which is mounted whole (a course in ``/usr/src/app``, a common Docker
    ``WORKDIR``), is covered by an empty tmpfs, and only what the child needs of it (the
    interpreter's folders) is mounted again.

    `read_only`: the whole file system is read-only once it is made, ``/tmp`` and
    ``/dev/shm`` included, and `argv` is pid 1 (a template's, `grader.sandbox.template`:
    each phase it forks mounts fresh ones, nothing one phase writes may outlive it, and
    every process that outlives a phase is the template's and kept from being read).
    """
    exe = _bwrap() or "bwrap"
    args = [exe, *namespaces(), *_system_binds()]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(scratch_bytes), "--tmpfs", SCRATCH]
    args += ["--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    masks = _masks(hide)
    for path in masks:
        args += ["--size", "4096", "--perms", "0555", "--tmpfs", path]
    for path in _python_dirs():
        if not _under(path, "/usr") or any(_under(path, m) for m in masks):
            args += ["--ro-bind", path, path]
    for package in ("framework", "grader"):
        path = str(course / package)
        args += ["--ro-bind", path, path]
    for folder in dict.fromkeys(str(d) for d in student_dirs):
        if os.path.abspath(folder) != "/":  # never the whole host
            args += ["--ro-bind", folder, folder]
    if read_only:
        for path in ("/", "/dev", SCRATCH, "/dev/shm"):
            args += ["--remount-ro", path]
        args += ["--as-pid-1"]  # no reaper of bwrap's beside it, which another can read
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


class BwrapLauncher:
    """Starts the zygote under bubblewrap and finds its children from outside.

    `template`: start a template instead (`grader.sandbox.template`), under a read-only
    file system; it forks phases' zygotes, never a child of its own."""

    def __init__(
        self,
        course: Path,
        student_dirs: Sequence[Path],
        hide: Sequence[Path] = (),
        *,
        template: bool = False,
    ) -> None:
        self.course = course
        self.student_dirs = list(student_dirs)
        self.hide = list(hide)
        self.template = template

    def launch(self) -> Zygote:
        """A zygote under bwrap: the one `prestart` started if it fits, else a new one.
        The caller puts it into the run's control group (`IsolatedSandbox`) before its
        first spawn command: it forks nothing before that, and whatever bwrap forked by then
        is found and moved with it. No code runs between fork and exec here, so the
        interpreter starts bwrap with vfork, not with a copy of this (large) process."""
        early = take_prestarted(self.course, self.student_dirs, self.hide, self.template)
        if early is not None:
            return early
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv = [sys.executable, "-m", "grader.sandbox.zygote", str(child.fileno())]
        argv += ["--template"] if self.template else []
        env = _sandbox_env(self.course)
        cmd = bwrap_command(
            self.course, self.student_dirs, argv, env=env, hide=self.hide, read_only=self.template
        )
        proc = subprocess.Popen(
            cmd,
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        child.close()
        return proc, parent

    def locate(self, zygote: ZygoteProcess, pid: int, traceback: str) -> tuple[int | None, str]:
        """The host pid of the sandbox process that calls itself `pid`, among bwrap's own
        descendants only (a zygote that lies cannot point the grader at anything else)."""
        return locate_below(zygote.pid, pid, traceback)


def locate_below(root: int, pid: int, traceback: str) -> tuple[int | None, str]:
    """The host pid of the descendant of host process `root` that calls itself `pid`, and
    the path, for the grader, of the stack dump file it knows as `traceback` ("" if none
    is found); `Launcher.locate` of a sandbox under bubblewrap or forked by a template."""
    host = find_descendant(root, pid)
    if host is None:
        return None, ""
    return host, f"/proc/{host}/root{traceback}" if traceback else ""


def find_descendant(root: int, pid: int, level: int = -1) -> int | None:
    """The host pid of the descendant of host process `root` whose pid in the pid
    namespace at `level` of its ``NSpid`` (-1: its own, the innermost) is `pid`."""
    seen: set[int] = set()
    frontier = [root]
    while frontier:
        for host in children_of(frontier.pop()):
            if host in seen:
                continue
            seen.add(host)
            frontier.append(host)
            ns = _ns_pids(host)
            if len(ns) >= 2 and -len(ns) <= level < len(ns) and ns[level] == pid:
                return host
    return None


_prestarted: tuple[Path, list[Path], list[Path], bool, Zygote] | None = None
_LAB = re.compile(r"(?:lab)?0*(\d{1,2})", re.IGNORECASE)
_VALUED = frozenset({"--impl", "--json", "--lang", "--seed"})


def prestart_verify(argv: Sequence[str], root: Path) -> None:
    """For ``verify ... --isolated``: start the isolated zygote now, reading what that run
    will need (the course's ``labs/``, the ``--impl`` file's folder, the lab's solution
    folder with ``--solution``), so that it warms up while the grader imports itself.
    Does nothing where bwrap is missing or the arguments are not understood here."""
    global _prestarted
    if _prestarted is not None or _bwrap() is None or not sys.platform.startswith("linux"):
        return
    dirs = [root / "labs"]
    args = list(argv)
    lab = ""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _VALUED and i + 1 < len(args):
            if arg == "--impl":
                dirs.append(Path(args[i + 1]).resolve().parent)
            i += 2
            continue
        if not arg.startswith("-") and not lab:
            lab = arg
        i += 1
    if "--solution" in args:
        m = _LAB.fullmatch(os.path.basename(lab.rstrip("/")))
        if m is None:
            return
        dirs.append(root / "solutions" / f"lab{int(m.group(1)):02d}")
    prestart(root, [d for d in dirs if d.is_dir()])


def prestart(
    root: Path, dirs: Sequence[Path], hide: Sequence[Path] = (), *, template: bool = False
) -> None:
    """Start the isolated zygote of a sandbox that will read the course at `root` and the
    folders `dirs`, hiding `hide`, so that it warms up while the caller imports the rest:
    the first sandbox made with the same course, folders and hidden folders takes it
    (`take_prestarted`). For ``verify --isolated`` (`prestart_verify`) and the grade
    worker's first lab. Does nothing where bwrap is missing or one was started already."""
    global _prestarted
    if _prestarted is not None or _bwrap() is None or not sys.platform.startswith("linux"):
        return
    try:
        launcher = BwrapLauncher(root, dirs, hide, template=template)
        _prestarted = (root, list(dirs), list(hide), template, launcher.launch())
    except OSError:
        _prestarted = None


def take_prestarted(
    course: Path, student_dirs: Sequence[Path], hide: Sequence[Path] = (), template: bool = False
) -> Zygote | None:
    """The zygote `prestart` started, once, if it reads `course` and every folder of
    `student_dirs` and hides exactly `hide`, and is a `template` or not as asked (a
    template must read exactly `student_dirs`: it covers, in each phase, all but the
    phase's own); None otherwise (a zygote that does not fit is ended)."""
    global _prestarted
    if _prestarted is None:
        return None
    root, dirs, hidden, kind, zygote = _prestarted
    _prestarted = None

    def covered(folder: Path) -> bool:
        return any(folder == d or d in folder.parents for d in dirs)

    same_hide = [Path(h).resolve() for h in hidden] == [Path(h).resolve() for h in hide]
    if template:
        fits = sorted(Path(d).resolve() for d in dirs) == sorted(
            Path(d).resolve() for d in student_dirs
        )
    else:
        fits = all(covered(Path(d)) for d in student_dirs)
    if root.resolve() == course.resolve() and kind == template and fits and same_hide:
        return zygote
    proc, ctl = zygote
    ctl.close()  # the zygote ends once its control socket closes
    proc.wait()
    return None
