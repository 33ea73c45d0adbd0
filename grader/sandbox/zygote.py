"""The pre-warmed process that forks sandbox children.

Started once per grading run with numpy and the framework already imported, so a child
costs a fork (about a millisecond) instead of a fresh interpreter. It listens on a Unix
socket (fd given on the command line) for two commands:

- ``spawn``: receives a socket and a pipe (SCM_RIGHTS), forks; the child moves into its own
  process group, points fds 1 and 2 at the pipe, applies resource limits and serves calls
  for one student module (`grader.sandbox.worker.serve`). Replies with the child's pid.
- ``reap``: waits for a child and replies with how it ended.

It never runs student code itself.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sys

_CHILD_LIMITS = {
    "nofile": 256,
}


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def _become_subreaper() -> None:
    """Adopt orphaned descendants of the children, even ones that left their process group
    with setsid(), so that they end with this process (`_end_descendants`)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: a descendant that leaves its group outlives the run


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                found.append(int(entry))
    return found


def _end_descendants() -> None:
    """Kill and reap every process this one parents: children and adopted orphans."""
    for _ in range(20):  # killing one can hand us its own children
        pids = _children_of(os.getpid())
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _child(conn: socket.socket, out_fd: int, student: str, mem_bytes: int, workdir: str) -> None:
    os.setpgid(0, 0)
    if workdir:
        os.chdir(workdir)  # files the student's code writes land in the run's scratch folder
        os.environ["TMPDIR"] = workdir
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    limits = [(resource.RLIMIT_CORE, 0)]
    if mem_bytes > 0:
        limits.append((resource.RLIMIT_AS, _vm_bytes() + mem_bytes))
    for which, value in limits:
        try:
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError):  # not enforceable on this system (macOS ignores AS)
            pass
    from grader.sandbox.worker import serve

    try:
        serve(conn, student)
    finally:
        os._exit(0)


def main() -> None:
    ctl = socket.socket(fileno=int(sys.argv[1]))
    import numpy  # noqa: F401  - pre-warm: children inherit these imports

    import framework  # noqa: F401
    from grader import codec  # noqa: F401
    from grader.sandbox import worker  # noqa: F401

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _become_subreaper()
    statuses: dict[int, int] = {}
    ctl.sendall(b'{"ready": true}')
    while True:
        msg, fds, _, _ = socket.recv_fds(ctl, 65536, 4)
        if not msg:
            _end_descendants()
            os._exit(0)  # nothing to flush; skip interpreter teardown
        cmd = json.loads(msg)
        if cmd["op"] == "spawn":
            conn_fd, out_fd = fds
            pid = os.fork()
            if pid == 0:
                ctl.close()
                _child(
                    socket.socket(fileno=conn_fd), out_fd, cmd["student"], cmd["mem"], cmd["cwd"]
                )
            try:
                os.setpgid(pid, pid)
            except OSError:
                pass
            os.close(conn_fd)
            os.close(out_fd)
            ctl.sendall(json.dumps({"pid": pid}).encode())
        elif cmd["op"] == "reap":
            pid = cmd["pid"]
            status = statuses.pop(pid, None)
            if status is None:
                try:
                    _, status = os.waitpid(pid, 0)
                except ChildProcessError:
                    status = -1
            ctl.sendall(json.dumps({"status": status}).encode())
        # collect any other finished children so no zombie lingers
        while True:
            try:
                done, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if done == 0:
                break
            statuses[done] = st


if __name__ == "__main__":
    try:
        main()
    except (OSError, EOFError, KeyboardInterrupt):
        _end_descendants()
        os._exit(0)  # the grader went away: nothing left to serve
