"""Where a hung call was stuck: the student's frames from a child's `faulthandler` dump.

A child dumps the stacks of its threads into a file shortly before a call's time is up (see
`worker.py`); when the call runs out of time the grader reads that dump just before ending
the child, and keeps the frames of the student's own files, in the format of an
exception's frames.
"""

from __future__ import annotations

import linecache
import os
import re
import time
from typing import Any

__all__ = ["stuck_frames"]

_FRAME = re.compile(r'^\s*File "(.*)", line (\d+) in (.*)$')
_MAX_FRAMES = 8
_TAIL = 64 * 1024
_HEADER = "Timeout ("


def _read(path: str, wait: float) -> str:
    """The file's last 64 KiB, once it is not growing (a dump is being written)."""
    deadline = time.monotonic() + wait
    size = -1
    while True:
        try:
            now = os.path.getsize(path)
        except OSError:
            now = 0
        if now > 0 and now == size:
            break
        if time.monotonic() >= deadline:
            break
        size = now
        time.sleep(0.01)
    try:
        with open(path, "rb") as f:
            f.seek(max(now - _TAIL, 0))
            return f.read(_TAIL).decode("utf-8", errors="replace")
    except OSError:
        return ""


def parse(text: str, student_file: str) -> list[dict[str, Any]]:
    """The student-file frames in the last dump of `text`: of the first thread that has
    any, outermost first."""
    at = text.rfind(_HEADER)
    text = text[at:] if at >= 0 else text
    student_dir = os.path.dirname(os.path.abspath(student_file)) + os.sep
    block: list[dict[str, Any]] = []
    for line in [*text.splitlines(), "Thread end"]:
        if line.startswith(("Thread ", "Current thread ")):
            if block:
                break
            continue
        m = _FRAME.match(line)
        if m is None:
            continue
        path = os.path.abspath(m.group(1))
        if not path.startswith(student_dir):
            continue
        lineno = int(m.group(2))
        linecache.checkcache(path)
        block.append(
            {
                "file": os.path.relpath(path, student_dir),
                "line": lineno,
                "func": m.group(3).strip(),
                "code": linecache.getline(path, lineno).strip(),
            }
        )
    block.reverse()  # the dump lists the most recent call first
    return block[-_MAX_FRAMES:]


def stuck_frames(path: str, student_file: str, wait: float = 0.5) -> list[dict[str, Any]]:
    """The student's frames where the child was stuck ([] if it dumped nothing)."""
    if not path:
        return []
    return parse(_read(path, wait), student_file)
