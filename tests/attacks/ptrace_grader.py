"""Attack: attach a debugger to the grader, and read its memory and environment.

With ptrace (or /proc/PID/mem) a process could rewrite the grader's verdicts in memory.
On the student's machine the grader makes itself undumpable, which refuses both to other
processes of an ordinary user (root may still; reported then). Under grade the grader is
out of sight in another pid namespace: contained. What worked is named in the error.
"""
# verify: contained-unless-root
# grade: contained

import ctypes
import os

_PTRACE_ATTACH, _PTRACE_DETACH = 16, 17


def _graders():
    pid, found = os.getpid(), []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = [a.decode(errors="replace") for a in f.read().split(b"\0")]
        except OSError:
            break
        if (
            cmd[1:3] in (["-m", "grader"], ["-m", "grader.grade.worker"])
            or os.path.basename(cmd[0] if len(cmd) < 2 else cmd[1]) == "minillm"
        ):
            found.append(pid)
    return found


def _try():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    worked = []
    for pid in _graders():
        if libc.ptrace(_PTRACE_ATTACH, pid, None, None) == 0:
            os.waitpid(pid, 0x40000000)  # __WALL
            libc.ptrace(_PTRACE_DETACH, pid, None, None)
            worked.append(f"ptrace {pid}")
        for name in ("mem", "environ"):
            try:
                with open(f"/proc/{pid}/{name}", "rb"):  # opening is the permission check
                    worked.append(f"{name} {pid}")
            except OSError:
                pass
    return worked


def attention_scores(q, k, scale):
    worked = _try()
    if worked:
        raise RuntimeError(f"ATTACK-WORKED {worked}")
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")
