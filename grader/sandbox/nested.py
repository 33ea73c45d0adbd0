"""A phase's own namespaces, made inside the template's bubblewrap (Linux, `ctypes` only).

`minillm grade` runs each phase of a submission (a lab's public tests, its hidden ones)
in a sandbox of its own. Starting a bubblewrap and an interpreter that imports numpy for
each costs a tenth of a CPU second; instead, one template zygote per submission
(`grader.sandbox.template`) imports them once, under a bubblewrap whose whole file system
is read-only, and forks each phase's zygote into fresh namespaces with `enter_phase`:

- a new user namespace (the same uid and gid, mapped one to one), in which the phase
  mounts what it needs, then drops every capability: nothing that runs in the phase can
  undo its mounts (a mount namespace made later from a user namespace of its own gets
  them locked);
- a new mount namespace, private, with fresh size-capped tmpfs on ``/tmp`` and
  ``/dev/shm`` and an empty read-only tmpfs over each folder the phase must not see (the
  other labs' files of the submission);
- new network, IPC and UTS namespaces, and a new session keyring: no socket, shared memory
  segment, message queue or key of one phase reaches another;
- a new pid namespace, made for the process forked after it (the phase's zygote, its pid
  1): when it ends, the kernel ends every process of the phase with it, and nothing in the
  phase can name a process outside it.

The proc file system stays the template's (a nested user namespace may not mount its own
over bubblewrap's read-only binds), so a phase sees the pids of the template and of the
next phase's zygote there; both are made non-dumpable (`limits.make_undumpable`), which keeps
their memory, descriptors and root out of reach of any other process of the user.

Standard library only, with `grader.sandbox.limits` and `grader.sandbox.privileges`:
`grader.sandbox.zygote` imports it inside the sandbox.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Sequence

from grader.sandbox.limits import set_dumpable
from grader.sandbox.privileges import new_session_keyring

__all__ = ["PhaseError", "drop_capabilities", "enter_phase"]

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PHASE_NAMESPACES = (
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID
)
_MS_RDONLY = 0x1
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class PhaseError(OSError):
    """A step of `enter_phase` failed; the message names it and the system's reason."""


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, step: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise PhaseError(err, f"{step}: {os.strerror(err)}")


def drop_capabilities() -> None:
    """Give up every capability (effective, permitted, inheritable; the ambient set goes
    with the permitted one)."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc().capset(ctypes.byref(header), data), "capset")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise PhaseError(e.errno or 0, f"writing {path}: {e.strerror}") from None


def _mount_tmpfs(libc: ctypes.CDLL, target: str, size: int, mode: str, flags: int = 0) -> None:
    options = f"size={size},mode={mode}".encode()
    result = libc.mount(b"tmpfs", target.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV | flags,
                        options)  # fmt: skip
    _check(result, f"mounting a tmpfs on {target}")


def _mounts_under(folder: str) -> list[str]:
    """The mount points below `folder`, parents first (from /proc/self/mountinfo)."""
    prefix = folder.rstrip("/") + "/"
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise PhaseError(e.errno or 0, f"reading /proc/self/mountinfo: {e.strerror}") from None
    points = []
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point.startswith(prefix):
                points.append(point)
    return list(dict.fromkeys(points))


def _bind(libc: ctypes.CDLL, fd: int, point: str) -> None:
    """Bind the mount open as `fd` (O_PATH, taken before its parent was covered) at
    `point` again, with the mounts below it; the folders on the way are made on the new
    tmpfs."""
    source = f"/proc/self/fd/{fd}"
    try:
        if os.path.isdir(source):
            os.makedirs(point, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(point), exist_ok=True)
            if not os.path.exists(point):
                os.close(os.open(point, os.O_CREAT | os.O_WRONLY, 0o444))
    except OSError as e:
        raise PhaseError(e.errno or 0, f"making {point}: {e.strerror}") from None
    # recursive: the mounts below it come along (a bind without them is refused, EINVAL,
    # where they are locked); a bind keeps the flags, read-only included
    result = libc.mount(source.encode(), point.encode(), None, _MS_BIND | _MS_REC, None)
    os.close(fd)
    _check(result, f"binding {point} again")


def enter_phase(
    tmp_bytes: int, shm_bytes: int, cover: Sequence[str] = (), scratch: str = "/tmp"
) -> None:
    """Move this process into a phase's own namespaces (see the module docstring); the
    next process it forks is pid 1 of the phase's pid namespace.

    `tmp_bytes` and `shm_bytes` cap the fresh `scratch` and ``/dev/shm``; each folder of
    `cover` gets an empty read-only tmpfs over it. Ends with every capability dropped and
    the working folder at ``/``.

    Raises:
        PhaseError: a step failed (user namespaces off, a seccomp filter, a kernel without
            one of them); the process is then in no state to serve a phase, and should end.
    """
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    # a non-dumpable process's /proc/self files are root's: dumpable while it writes its
    # maps (a grader that is not root could not otherwise), not once the zygote is forked
    if not set_dumpable(True):
        raise PhaseError(0, "prctl(PR_SET_DUMPABLE, 1) failed")
    _check(libc.unshare(PHASE_NAMESPACES), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
    _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    if not set_dumpable(False):
        raise PhaseError(0, "prctl(PR_SET_DUMPABLE, 0) failed")
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "making / private")
    points = _mounts_under(scratch)
    tops = [p for p in points if not any(p.startswith(q.rstrip("/") + "/") for q in points)]
    below = [(point, os.open(point, os.O_PATH)) for point in tops]
    _mount_tmpfs(libc, scratch, tmp_bytes, "0755")
    for point, fd in below:  # what the template reads under /tmp (the run's folder), again
        _bind(libc, fd, point)
    _mount_tmpfs(libc, "/dev/shm", shm_bytes, "0755")
    for folder in cover:
        _mount_tmpfs(libc, folder, 4096, "0555", _MS_RDONLY)
    why = new_session_keyring()
    if why:  # the template's keyring would be every phase's
        raise PhaseError(0, why)
    os.chdir("/")  # not the template's /tmp, which the new one covers
    drop_capabilities()
