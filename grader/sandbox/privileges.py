"""Dropping a sandbox child's privileges (the uid isolation level, `grader.sandbox.uidlevel`),
and a sandbox's own session keyring (every level).

A leaf module, standard library only, imported by the zygote before it forks: a child
that must run as an unprivileged uid calls `drop_privileges` before anything of the
student's runs, and runs nothing if it fails.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable

__all__ = ["CLONE_NEWNET", "drop_privileges", "in_child", "new_session_keyring"]

CLONE_NEWNET = 0x40000000  # linux/sched.h
_KEYCTL_JOIN_SESSION_KEYRING = 1
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219}  # asm-generic's is 219
_NO_KEYRINGS = (1, 13, 38)  # EPERM, EACCES (a seccomp filter), ENOSYS (a kernel without)


def new_session_keyring() -> str:
    """Join a new, empty session keyring (Linux), so that nothing this process and its
    children store in one (``add_key``) reaches another sandbox: a grader started from a
    login has a session keyring of its own, which every process it starts would share.

    Returns "" once done, or where keyrings cannot be used here (no kernel support, or a
    seccomp filter refuses them to us and to the student's code alike); otherwise why not.
    """
    if not sys.platform.startswith("linux"):
        return ""
    number = _SYS_KEYCTL.get(os.uname().machine)
    if number is None:
        return f"no keyctl number known for {os.uname().machine}"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(number, _KEYCTL_JOIN_SESSION_KEYRING, None) >= 0:
        return ""
    err = ctypes.get_errno()
    return "" if err in _NO_KEYRINGS else f"a new session keyring: {os.strerror(err)}"


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
