"""The uid isolation level: grading where bubblewrap cannot make namespaces, as root.

Docker's default seccomp profile refuses user namespaces, and Gradescope runs its
autograders as root in Docker containers: there bubblewrap cannot start, yet the grader
is root. `UidSandbox` is the sandbox for that case. Each sandbox (one per lab's public
tests, one per lab's hidden tests, see `grader.grade.backends`):

- forks its children from a zygote beside the grader, as the fork backend does; each child
  then drops to an unprivileged uid and gid of this sandbox's own (`claim_uid`: no other
  sandbox of the machine holds it meanwhile), with no supplementary
  groups, before anything of the student's runs (`grader.sandbox.privileges`, called by
  the zygote's child with the ``uid`` of its spawn command);
- gives that uid a private scratch folder (mode 0700, owned by it) and the student's own
  file, read-only; RLIMIT_NPROC then counts that uid's processes, and the run's control
  group, where one can be made, caps the whole tree;
- puts each child in a network namespace of its own where the kernel lets root make one
  (``unshare(CLONE_NEWNET)``); where it cannot (no CAP_SYS_ADMIN, as in Docker), the
  report says that the network was not isolated;
- when it closes, kills every process of its uid and removes what that uid left in the
  world-writable folders (``/tmp``, ``/var/tmp``, ``/dev/shm``).

What the grader must keep from that uid is made readable by root only (`protect`: mode
0700 on the folder that holds it): the course's ``solutions/`` (hidden checks and
reference code), the run's copy of the hidden checks and its result files.

What this level does not give, and bubblewrap does: a file system of its own. The child
sees the host's files as any unprivileged user would (everything world-readable), and the
host's ``/tmp``. The README's trust section has the table of what each level guarantees.

Standard library and `grader.sandbox` only.
"""

from __future__ import annotations

import ctypes
import os
import random
import shutil
import signal
import stat
import sys
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from grader.sandbox.channel import Child
from grader.sandbox.client import Sandbox
from grader.sandbox.limits import DEFAULT_LIMITS, Limits
from grader.sandbox.privileges import CLONE_NEWNET, drop_privileges, in_child

__all__ = [
    "UID_BASE",
    "UidSandbox",
    "claim_uid",
    "network_isolation",
    "protect",
    "release_uid",
    "uid_unavailable",
]

UID_BASE = 30000  # sandbox uids are UID_BASE .. UID_BASE + UID_SPAN - 1 (inside 16 bits)
UID_SPAN = 30000
_SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
_SWEEP_LIMIT = 100_000  # entries looked at per folder when sweeping a uid's files
_PROBE_UID = UID_BASE - 1  # the availability probe's child: outside the sandboxes' range
_CLAIMS = "/tmp"  # where each sandbox's uid is claimed (a root-only file per uid)


def _claim_path(uid: int) -> str:
    return os.path.join(_CLAIMS, f".minillm-uid-{uid}")


def _in_use(uid: int) -> bool:
    """Whether a process of this machine runs as `uid` now (from /proc)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if uid in (int(x) for x in line.split()[1:]):
                            return True
                        break
        except (OSError, ValueError):
            continue
    return False


def claim_uid(tries: int = 200) -> int:
    """A uid that no other sandbox of this machine has, for as long as `release_uid` is
    not called: claimed by creating its file exclusively (one of a grader that died is
    taken back), and not the uid of any process running now.

    Raises:
        OSError: no uid could be claimed.
    """
    rng = random.SystemRandom()
    for _ in range(tries):
        uid = UID_BASE + rng.randrange(UID_SPAN)
        path = _claim_path(uid)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            try:
                with open(path) as f:
                    owner = int(f.read().strip() or "0")
            except (OSError, ValueError):
                continue
            if owner > 0 and not os.path.exists(f"/proc/{owner}"):
                release_uid(uid)  # its grader is gone: free again next time round
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        if not _in_use(uid):
            sweep_orphans()
            return uid
        release_uid(uid)
    raise OSError("no free uid for a sandbox could be claimed")


def _held(uid: int) -> bool:
    """Whether a live grader holds `uid`'s claim."""
    try:
        with open(_claim_path(uid)) as f:
            owner = int(f.read().strip() or "0")
    except (OSError, ValueError):
        return False
    return owner > 0 and os.path.exists(f"/proc/{owner}")


def sweep_orphans(dirs: Sequence[str] = _SHARED_DIRS) -> int:
    """Remove what sandbox uids that nobody holds left in the world-writable `dirs` (a
    grader killed before its sandboxes closed); how many entries."""
    return _sweep(dirs, lambda owner: UID_BASE <= owner < UID_BASE + UID_SPAN and not _held(owner))


def release_uid(uid: int) -> None:
    """Give back a uid that `claim_uid` returned."""
    try:
        os.unlink(_claim_path(uid))
    except OSError:
        pass


@cache
def uid_unavailable() -> str | None:
    """None when the uid level can run here (Linux, as root, a child can drop to an
    unprivileged uid); else one line that says why not."""
    if not sys.platform.startswith("linux") or not hasattr(os, "setresuid"):
        return f"the uid level needs Linux; this is {sys.platform}"
    if os.geteuid() != 0:
        return "the uid level needs the grader to run as root (it drops each child's uid)"
    if in_child(lambda: drop_privileges(_PROBE_UID, network=False)) != 0:
        return "a child of the grader cannot drop to an unprivileged uid here"
    stdlib = os.path.dirname(os.__file__)

    def reads_python() -> None:
        drop_privileges(_PROBE_UID, network=False)
        for path in (sys.executable, stdlib, os.path.join(stdlib, "lib-dynload")):
            if os.path.exists(path) and not os.access(path, os.R_OK | os.X_OK):
                raise PermissionError(path)
        os.listdir(stdlib)

    if in_child(reads_python) != 0:
        return (
            f"an unprivileged uid cannot read this Python installation ({sys.base_prefix}): "
            "the uid level's children could not run (install Python where every user can "
            "read it, or let others traverse the folders above it)"
        )
    return None


@cache
def network_isolation() -> bool:
    """Whether a child here can get a network namespace of its own (root, CAP_SYS_ADMIN)."""
    if not sys.platform.startswith("linux"):
        return False

    def unshare() -> None:
        if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET)")

    return in_child(unshare) == 0


def protect(folder: Path) -> bool:
    """Make `folder` readable by its owner only (mode 0700), if it exists and is not so
    already; whether its mode was changed."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) & 0o077 == 0:
        return False
    os.chmod(folder, stat.S_IMODE(st.st_mode) & 0o700)
    return True


def _hand_over(folder: str, uid: int) -> None:
    """Make `folder` the private scratch of `uid`: owned by it, mode 0700."""
    os.chown(folder, uid, uid)
    os.chmod(folder, 0o700)


def _lend(folder: str, gid: int) -> None:
    """Let group `gid` read `folder` and its files (no links), and nobody else: the files
    stay root's (so that sweeping the uid's files leaves them alone) and read-only."""
    for here, _, files in os.walk(folder):
        os.chown(here, -1, gid)
        os.chmod(here, 0o750)
        for name in files:
            path = os.path.join(here, name)
            if not os.path.islink(path):
                os.chown(path, -1, gid)
                os.chmod(path, 0o640)


def kill_uid(uid: int, rounds: int = 3) -> None:
    """Kill every process of `uid` (a child that takes the uid and signals -1: the kernel
    then signals exactly that uid's processes)."""
    if not hasattr(os, "setresuid"):
        return

    def kill_all() -> None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(-1, sig)
            except ProcessLookupError:
                pass

    for _ in range(rounds):
        in_child(kill_all)
        time.sleep(0.005)


def _sweep(dirs: Sequence[str], doomed: Callable[[int], bool]) -> int:
    """Remove the entries of `dirs` whose owner is `doomed`; how many. A sandbox uid can
    only have written into a folder that every user may write or that a sandbox uid owns,
    so only those are entered (a huge tree of root's, a virtualenv in /tmp, is not)."""
    removed = 0
    for top in dirs:
        seen = 0
        for here, subdirs, files in os.walk(top):
            keep = []
            for name in subdirs:
                try:
                    st = os.lstat(os.path.join(here, name))
                except OSError:
                    continue
                if st.st_mode & 0o002 or UID_BASE <= st.st_uid < UID_BASE + UID_SPAN:
                    keep.append(name)
            subdirs[:] = keep
            for name in files:
                seen += 1
                if seen > _SWEEP_LIMIT:
                    break
                path = os.path.join(here, name)
                try:
                    if doomed(os.lstat(path).st_uid):
                        os.unlink(path)
                        removed += 1
                except OSError:
                    continue
        for here, subdirs, _ in os.walk(top, topdown=False):  # folders, emptied, last
            for name in subdirs:
                path = os.path.join(here, name)
                try:
                    if doomed(os.lstat(path).st_uid):
                        shutil.rmtree(path, ignore_errors=True)
                        removed += 1
                except OSError:
                    continue
            break  # the top level is enough: a doomed folder goes whole
    return removed


def sweep_uid_files(uid: int, dirs: Sequence[str] = _SHARED_DIRS) -> int:
    """Remove every file and folder `uid` owns in the world-writable `dirs`; how many."""
    return _sweep(dirs, lambda owner: owner == uid)


class UidSandbox(Sandbox):
    """A fork-backend `Sandbox` whose children run as an unprivileged uid of its own.

    `student_dirs` are the folders of the student files it will serve: the group of that
    uid may read them, nobody else (mode 0750/0640). See the module docstring for the rest.
    """

    def __init__(
        self,
        student_dirs: Sequence[Path] = (),
        limits: Limits = DEFAULT_LIMITS,
        uid: int | None = None,
    ) -> None:
        super().__init__(limits, backend="fork")
        self.backend = "uid"
        self._claimed = uid is None
        self.uid = claim_uid() if uid is None else uid
        self.student_dirs = [str(d) for d in student_dirs]
        self.network = network_isolation()
        self.isolation_note = (
            ""
            if self.network
            else "the network is not isolated: the kernel refused a network namespace here"
        )

    def start(self) -> None:
        fresh = not self.workdir
        super().start()
        if fresh and self.workdir:
            os.chmod(os.path.dirname(self.workdir), 0o711)  # traverse only: no listing
            _hand_over(self.workdir, self.uid)

    def spawn(self, student_path: str) -> Child:
        # lent when a child needs it, not at start: the next sandbox starts early, while
        # this one may still run children on the same folder
        for folder in self.student_dirs:
            _lend(folder, self.uid)
        return super().spawn(student_path)

    def _setup(self, student_path: str) -> dict[str, Any]:
        setup = super()._setup(student_path)
        setup["uid"] = self.uid
        setup["network"] = self.network
        setup["traceback"] = os.path.join(self.workdir, f".minillm-stack-{setup['gen']}.txt")
        return setup

    def close(self) -> None:
        kill_uid(self.uid)
        super().close()
        sweep_uid_files(self.uid)
        if self._claimed:
            release_uid(self.uid)
            self._claimed = False
