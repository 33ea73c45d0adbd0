"""The pre-warmed process that forks sandbox children.

Started once per grading run with numpy and the framework already imported, so a child
costs a fork (about a millisecond) instead of a fresh interpreter. It listens on a Unix
stream socket (fd given on the command line) for two commands, each a JSON frame of
`protocol` (a ``{"ready": true}`` frame says it is warm):

- ``spawn``: receives a socket and a pipe (SCM_RIGHTS, sent with the frame), forks; the
  child moves into its own process group, points fds 1 and 2 at the pipe, applies resource
  limits, drops to the command's ``uid`` if it has one (the uid level: it runs nothing if
  that fails) and serves calls for one student module (`grader.sandbox.worker.serve`). Replies
  with the child's pid.
- ``reap``: waits for a child and replies with how it ended.

It never runs student code itself. Started with ``--template`` (`grader.sandbox.template`:
one per graded submission, under a read-only bubblewrap), it forks no child: its one command
is ``phase``, which receives a new control socket, forks a process that makes a phase's own
namespaces (`grader.sandbox.nested`) and forks in them a zygote serving that socket (pid 1
of the phase), and replies with that zygote's pid, or why it could not be made.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from collections import deque
from typing import Any, NoReturn

from grader.sandbox.limits import (
    apply_child_limits,
    children_of,
    kill_tree,
    make_undumpable,
    set_dumpable,
)
from grader.sandbox.privileges import drop_privileges, new_session_keyring
from grader.sandbox.protocol import CONTROL_FRAME, FrameReader, parse_json, send_json

_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def _become_subreaper() -> None:
    """Adopt orphaned descendants of the children, even ones that left their process group
    with setsid(), so that they end with this process (`_end_descendants`)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: a descendant that leaves its group outlives the run


def _end_descendants(budget: float = 10.0) -> None:
    """Kill and reap every process this one parents, children and adopted orphans, until
    none is left (each tree is stopped before it is killed, so a fork loop can't outrun it)."""
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline:
        pids = children_of(os.getpid())
        if not pids:
            return
        for pid in pids:
            kill_tree(pid)
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _child(conn: socket.socket, out_fd: int, cmd: dict[str, Any], dumpable: bool) -> None:
    os.setpgid(0, 0)
    if dumpable:  # a phase's child, forked from a template kept from being read: readable
        set_dumpable(True)  # by the grader again (its stack dump, through /proc/PID/root)
    workdir = str(cmd.get("cwd") or "")
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
    apply_child_limits(
        int(cmd.get("mem") or 0),
        int(cmd.get("files") or 0),
        int(cmd.get("open_files") or 0),
        int(cmd.get("processes") or 0),
        int(cmd.get("cpu_seconds") or 0),
        int(cmd.get("niceness") or 0),
    )
    uid = cmd.get("uid")
    if isinstance(uid, int) and not isinstance(uid, bool):  # the uid level: never run as root
        try:
            drop_privileges(uid, network=cmd.get("network") is not False)
        except OSError:
            os._exit(71)  # EX_OSERR: nothing of the student's has run
    from grader.sandbox.worker import serve

    try:
        serve(
            conn,
            str(cmd["student"]),
            gen=int(cmd.get("gen") or 0),
            traceback_path=str(cmd.get("traceback") or ""),
            import_dump_at=float(cmd.get("import_dump_at") or 0.0),
        )
    finally:
        os._exit(0)


class _Commands:
    """Reads command frames and the descriptors sent with them (kept in arrival order)."""

    def __init__(self, ctl: socket.socket) -> None:
        self.ctl = ctl
        self.reader = FrameReader(CONTROL_FRAME)
        self.fds: deque[int] = deque()

    def next(self) -> dict[str, Any] | None:
        """The next command, or None when the grader has gone."""
        while True:
            data, fds, _, _ = socket.recv_fds(self.ctl, self.reader.wanted(), 8)
            self.fds.extend(fds)
            if not data:
                return None
            frame = self.reader.feed(data)
            if frame is not None:
                return parse_json(frame)

    def take_fds(self, n: int) -> list[int]:
        if len(self.fds) < n:
            raise EOFError("a command arrived without its descriptors")
        return [self.fds.popleft() for _ in range(n)]


def main() -> None:
    ctl = socket.socket(fileno=int(sys.argv[1]))
    template = "--template" in sys.argv[2:]
    if template and not make_undumpable():  # before anything is loaded: none of it readable
        raise OSError("a template must be kept from being read (PR_SET_DUMPABLE)")
    # not the grader's keyring, which every sandbox it starts would share; where this cannot
    # be done (keyrings refused by a seccomp filter, or absent) the student cannot use one
    new_session_keyring()
    import numpy  # noqa: F401  - pre-warm: children inherit these imports

    import framework

    framework.load_all()  # every module, not just the package's lazy names
    from grader import codec  # noqa: F401
    from grader.sandbox import worker  # noqa: F401

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _become_subreaper()
    _serve(ctl, template=template)


def _serve(ctl: socket.socket, *, template: bool = False, phase: bool = False) -> None:
    """Answer the grader's commands on `ctl` until it goes: ``spawn`` and ``reap`` for a
    zygote, ``phase`` only for a template (which never forks a child of its own). A
    phase's zygote, pid 1 of its pid namespace, just ends: the kernel ends the rest."""
    statuses: dict[int, int] = {}
    commands = _Commands(ctl)
    send_json(ctl, {"ready": True})
    while True:
        cmd = commands.next()
        if cmd is None:
            if not phase:
                _end_descendants()
            os._exit(0)  # nothing to flush; skip interpreter teardown
        op = cmd.get("op")
        if template:
            if op == "phase":
                (phase_fd,) = commands.take_fds(1)
                send_json(ctl, _fork_phase(ctl, commands, phase_fd, cmd))
            else:
                send_json(ctl, {"error": f"a template serves phases only, not {op!r}"})
        elif op == "spawn":
            conn_fd, out_fd = commands.take_fds(2)
            pid = os.fork()
            if pid == 0:
                ctl.close()
                for fd in commands.fds:  # another child's, if any arrived early
                    os.close(fd)
                _child(socket.socket(fileno=conn_fd), out_fd, cmd, dumpable=phase)
            try:
                os.setpgid(pid, pid)
            except OSError:
                pass
            os.close(conn_fd)
            os.close(out_fd)
            send_json(ctl, {"pid": pid})
        elif op == "reap":
            pid = int(cmd["pid"])
            status = statuses.pop(pid, None)
            if status is None:
                try:
                    _, status = os.waitpid(pid, 0)
                except ChildProcessError:
                    status = -1
            send_json(ctl, {"status": status})
        # collect any other finished children so no zombie lingers
        while True:
            try:
                done, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if done == 0:
                break
            statuses[done] = st


def _phase_zygote(phase_fd: int) -> NoReturn:
    """A phase's zygote, pid 1 of its pid namespace: serves `phase_fd` and ends, however
    its loop ends (a reset socket too), without looking for its descendants: the kernel
    ends them with it (and /proc, the template's, would name other processes)."""
    try:
        _serve(socket.socket(fileno=phase_fd), phase=True)
    finally:
        os._exit(0)


def _fork_phase(
    ctl: socket.socket, commands: _Commands, phase_fd: int, cmd: dict[str, Any]
) -> dict[str, Any]:
    """Fork a phase's zygote in namespaces of its own (`grader.sandbox.nested`), serving
    `phase_fd`: its pid here, or why it could not be made. The process between them makes
    the namespaces and ends once it has forked the zygote, which this one then adopts."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        reply: dict[str, Any]
        try:
            ctl.close()
            os.close(read_end)
            for fd in commands.fds:
                os.close(fd)
            from grader.sandbox.nested import enter_phase

            cover = [str(c) for c in cmd.get("cover") or []]
            enter_phase(int(cmd["tmp"]), int(cmd["shm"]), cover)
            zygote = os.fork()
            if zygote == 0:
                os.close(write_end)
                _phase_zygote(phase_fd)
            reply = {"pid": zygote}
        except BaseException as e:  # reported to the grader, which then falls back
            reply = {"error": f"{type(e).__name__}: {e}"}
        os.write(write_end, json.dumps(reply).encode())
        os._exit(0)
    os.close(write_end)
    os.close(phase_fd)
    chunks = []
    while chunk := os.read(read_end, 4096):
        chunks.append(chunk)
    os.close(read_end)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    try:
        got = json.loads(b"".join(chunks))
    except ValueError:
        got = None
    return got if isinstance(got, dict) else {"error": "the phase's process ended first"}


if __name__ == "__main__":
    try:
        main()
    except (OSError, EOFError, ValueError, KeyboardInterrupt):
        _end_descendants()
        os._exit(0)  # the grader went away: nothing left to serve
