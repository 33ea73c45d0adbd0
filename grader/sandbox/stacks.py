"""Where a hung call was stuck: the student's frames from a child's `faulthandler` dump.

When a call runs out of time the grader has the child dump the stacks of its threads into a
file (see `stackdump.StackDump`), reads the last dump just before it ends the child, and keeps the
frames of the student's own files, in the format of an exception's frames.
"""

from __future__ import annotations

import os
import re
import stat
import time
from typing import Any

__all__ = ["read_regular", "stuck_frames"]

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
            st = os.lstat(path)
            now = st.st_size if stat.S_ISREG(st.st_mode) else 0
        except OSError:
            now = 0
        if now > 0 and now == size:
            break
        if time.monotonic() >= deadline:
            break
        size = now
        time.sleep(0.01)
    return read_regular(path, _TAIL, tail=True).decode("utf-8", errors="replace")


def read_regular(path: str, limit: int, *, tail: bool = False) -> bytes:
    """At most `limit` bytes of `path` (its end with `tail`), or b"" unless it is a regular
    file: the child's code can replace any file it can write, and a FIFO would otherwise
    hold the grader's read forever. No link is followed, nothing blocks."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b""
        if tail:
            os.lseek(fd, max(st.st_size - limit, 0), os.SEEK_SET)
        return os.read(fd, limit)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _source_line(path: str, lineno: int) -> str:
    lines = read_regular(path, 1 << 20).decode("utf-8", errors="replace").splitlines()
    return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


def parse(text: str, student_file: str) -> list[dict[str, Any]]:
    """The student-file frames of the last dump in `text` that has any (the last one may be
    half written, or taken before the student's code started), outermost first."""
    student_dir = os.path.dirname(os.path.abspath(student_file)) + os.sep
    dumps = text.split(_HEADER)
    for dump in reversed(dumps):
        frames = _student_frames(dump, student_dir)
        if frames:
            return frames
    return []


def _student_frames(dump: str, student_dir: str) -> list[dict[str, Any]]:
    """The student-dir frames of the first thread of `dump` that has any, outermost first."""
    block: list[dict[str, Any]] = []
    for line in [*dump.splitlines(), "Thread end"]:
        if line.startswith(("Thread ", "Current thread ")):
            if block:
                break
            continue
        m = _FRAME.match(line)
        if m is None or m.group(1).startswith("<"):  # "<frozen runpy>", "<string>": no file
            continue
        path = os.path.abspath(m.group(1))
        if not path.startswith(student_dir):
            continue
        lineno = int(m.group(2))
        block.append(
            {
                "file": os.path.relpath(path, student_dir),
                "line": lineno,
                "func": m.group(3).strip(),
                "code": _source_line(path, lineno).strip(),
            }
        )
    block.reverse()  # a dump lists the most recent call first
    return block[-_MAX_FRAMES:]


def stuck_frames(path: str, student_file: str, wait: float = 0.5) -> list[dict[str, Any]]:
    """The student's frames where the child was stuck ([] if it dumped nothing)."""
    if not path:
        return []
    return parse(_read(path, wait), student_file)
