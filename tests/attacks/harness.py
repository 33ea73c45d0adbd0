"""Run one grader command and report what it left behind (used by tests/test_attacks.py).

    python tests/attacks/harness.py REPORT.json SECONDS -- COMMAND...

COMMAND runs with stdin from /dev/null and its stdout and stderr in ``REPORT.json.out`` and
``REPORT.json.err``. This process is its children's subreaper, so every process of the run
that is orphaned (a daemon that called setsid, one whose parent was killed) is adopted here
instead of vanishing into init. While COMMAND runs, the peak resident memory (VmHWM) of the
grader's own processes is sampled: COMMAND itself and every ``grader.grade.worker`` below
it, never the sandbox's processes, which run the student's code.

When COMMAND has exited, whatever is still alive below this process after a grace period is
a leftover: its command line is recorded, then it is killed. A COMMAND still running after
SECONDS (a grader that was stopped, say) is killed, with everything below it, and marked
``timed_out``. REPORT.json then holds ``{"rc", "seconds", "timed_out", "grader_peak_kib",
"leftovers"}``.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

_GRACE = 2.0  # seconds for a run's own clean-up to finish after COMMAND exits
_PR_SET_CHILD_SUBREAPER = 36


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except (OSError, ValueError):
        pass
    return out


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for c in _children(todo.pop()):
            if c not in found:
                found.append(c)
                todo.append(c)
    return found


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


def _hwm(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main() -> int:
    report, limit = sys.argv[1], float(sys.argv[2])
    cmd = sys.argv[sys.argv.index("--") + 1 :]
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    start = time.monotonic()
    with open(report + ".out", "wb") as out, open(report + ".err", "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    peak: dict[int, int] = {}
    timed_out = False
    while proc.poll() is None:
        if time.monotonic() - start > limit:
            timed_out = True
            for pid in [proc.pid, *_tree(proc.pid)]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            proc.wait()
            break
        for pid in [proc.pid, *_tree(proc.pid)]:
            if pid == proc.pid or "grader.grade.worker" in _cmdline(pid):
                peak[pid] = max(peak.get(pid, 0), _hwm(pid))
        time.sleep(0.01)
    seconds = time.monotonic() - start
    deadline = time.monotonic() + _GRACE
    left = [p for p in _tree(os.getpid()) if _state(p) != "Z"]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        _reap()
        left = [p for p in _tree(os.getpid()) if _state(p) not in ("Z", "?")]
    leftovers = [_cmdline(p) or f"pid {p}" for p in left]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.05)
    _reap()
    with open(report, "w") as f:
        json.dump(
            {
                "rc": proc.returncode,
                "seconds": seconds,
                "timed_out": timed_out,
                "grader_peak_kib": max(peak.values(), default=0),
                "leftovers": leftovers,
            },
            f,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
