"""Dropping a sandbox child's privileges (the uid isolation level, `grader.sandbox.uidlevel`).

A leaf module, standard library only, imported by the zygote before it forks: a child
that must run as an unprivileged uid calls `drop_privileges` before anything of the
student's runs, and runs nothing if it fails.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

__all__ = ["CLONE_NEWNET", "drop_privileges", "in_child"]

CLONE_NEWNET = 0x40000000  # linux/sched.h


def drop_privileges(uid: int, *, network: bool = True) -> None:
    """In a new sandbox child (run as root): a network namespace of its own if the kernel
    allows it (`network`), then no supplementary groups, gid and uid `uid`.

    Raises:
        OSError: the uid could not be dropped (the child must then run nothing).
    """
    if network:
        try:
            ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET)
        except (OSError, AttributeError):
            pass  # the grader probes this once (`uidlevel.network_isolation`) and says so
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getgroups():
        raise OSError(f"could not drop to uid {uid}")


def in_child(fn: Callable[[], object]) -> int:
    """Run `fn()` in a forked child; its exit status (0: it returned, 1: it raised)."""
    pid = os.fork()
    if pid == 0:
        try:
            fn()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
