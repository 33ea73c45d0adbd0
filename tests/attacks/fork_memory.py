"""Attack: multiply the memory limit with forks.

Each process may use its own address-space limit, so eight forks that each fill 1 GiB
would use 8 GiB together. Contained where a control group can be made (the run's group caps
the memory and the number of processes of the whole tree; the grader's memory is untouched)
and under bubblewrap; an ordinary user without cgroup delegation is capped by RLIMIT_NPROC
only (reported then). The eight forks are made once, in the first call: the later tests'
calls would only repeat them.
"""
# verify: contained-with-cgroup
# grade: contained

import os
import time

_GIB = 1024**3


def _fill():
    try:
        block = bytearray(_GIB)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(20)
    except MemoryError:
        pass


_forked = []


def attention_scores(q, k, scale):
    if _forked:  # once per process: the later tests' calls add nothing to the attack
        raise NotImplementedError("lab04: ATTACK forked already")
    _forked.append(True)
    kids = []
    for _ in range(8):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            _fill()
            os._exit(0)
        kids.append(pid)
    time.sleep(1.5)
    alive = 0
    for pid in kids:
        done, _ = os.waitpid(pid, os.WNOHANG)
        alive += done == 0
    raise NotImplementedError(f"lab04: ATTACK {alive} of {len(kids)} forks alive")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")
