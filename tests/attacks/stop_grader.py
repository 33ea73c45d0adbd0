"""Attack: stop the grader (SIGSTOP) and kill its sandbox server.

A process of the same user can always stop another one; on the student's machine that
only hurts the student (not run under verify). Contained under grade: the grader is in
another pid namespace, out of sight.
"""
# verify: skip (SIGSTOP cannot be refused to a process of the same user)
# grade: contained

import os
import signal


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


def attention_scores(q, k, scale):
    hit = []
    for pid in _graders():
        try:
            os.kill(pid, signal.SIGSTOP)
            hit.append(pid)
        except OSError:
            pass
    raise NotImplementedError(f"lab04: ATTACK stopped {hit}")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")
