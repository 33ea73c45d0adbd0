"""Attack: interrupt the grader (SIGINT, then SIGTERM) from the first call.

On the student's machine the grader runs as the same user and can be signalled; then it
must still end with a report of what finished, a line saying it was interrupted, and no
scratch folder or process left behind: contained in that sense. Under grade the grader is
in another pid namespace and cannot be seen at all: contained, graded as a stub.
"""
# verify: contained
# grade: contained
# interrupts: yes

import os
import signal
import time


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
    for sig in (signal.SIGINT, signal.SIGTERM):
        for pid in _graders():
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        time.sleep(0.1)
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")
