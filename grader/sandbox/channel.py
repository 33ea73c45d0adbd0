"""A running sandbox child as the grader holds it: its socket, its output, how to end it.

Both backends hand `Session` a `Child`. The child's stdout and stderr go to one pipe whose
bytes are counted and kept up to a cap for each call:

- `PipeOutput` (fork backend): the pipe's read end is non-blocking and `Session` selects on
  it together with the reply socket; after a reply, what is left in the pipe is exactly
  what the child wrote before replying.
- `PumpOutput` (spawn backend): a thread drains the pipe (Windows can't `select` on pipes).
  The child writes `protocol.sync_marker(n)` before its n-th reply, so `collect(n)` waits
  for that marker and returns the output that came before it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field

from grader.sandbox.limits import DEFAULT_LIMITS, DUMP_SIGNAL, kill_tree
from grader.sandbox.protocol import SYNC_PREFIX

__all__ = ["Child", "Output", "PipeOutput", "PumpOutput"]


class Output:
    """The output of one child, counted and capped call by call."""

    def __init__(self, cap: int = DEFAULT_LIMITS.output) -> None:
        self.cap = cap  # until `begin`: the cap on what the child prints as it imports
        self.kept = bytearray()
        self.total = 0

    def begin(self, cap: int) -> None:
        """Keep at most `cap` bytes of the next call's output. Called before its request is
        sent: from then on, what the child prints belongs to that call."""
        self.cap = cap

    def _take(self, chunk: bytes | bytearray) -> None:
        self.total += len(chunk)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]

    def _done(self) -> tuple[bytes, int]:
        kept, total = bytes(self.kept), self.total
        self.kept = bytearray()
        self.total = 0
        return kept, total

    def fileno(self) -> int | None:
        """A descriptor to `select` on while waiting for a reply, or None (a thread reads)."""
        return None

    def read_some(self) -> None:
        """Read what is available now (only when `fileno()` was readable)."""

    def collect(self, seq: int | None, wait: float) -> tuple[bytes, int]:
        """The call's (kept bytes, total bytes), and start afresh.

        `seq`: the number of the reply just received (its output is everything before the
        child's sync marker); None after a timeout or crash: take what has arrived, waiting
        up to `wait` seconds for the pipe to close.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release the pipe."""


class PipeOutput(Output):
    """A non-blocking pipe that the caller selects on."""

    def __init__(self, fd: int, cap: int = DEFAULT_LIMITS.output) -> None:
        super().__init__(cap)
        os.set_blocking(fd, False)
        self._fd: int | None = fd

    def fileno(self) -> int | None:
        return self._fd

    def read_some(self) -> None:
        if self._fd is None:
            return
        try:
            chunk = os.read(self._fd, 1 << 16)
        except BlockingIOError:
            return
        if chunk:
            self._take(chunk)
        else:
            self.close()

    def collect(self, seq: int | None, wait: float) -> tuple[bytes, int]:
        while self._fd is not None:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                self.close()
                break
            self._take(chunk)
        return self._done()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class PumpOutput(Output):
    """A pipe drained by a daemon thread, split into calls by the child's sync markers."""

    _CARRY = len(SYNC_PREFIX) + 24  # a marker split across two reads

    def __init__(self, fd: int, cap: int = DEFAULT_LIMITS.output) -> None:
        super().__init__(cap)
        self._fd = fd
        self._cond = threading.Condition()
        self._marks: dict[int, tuple[bytes, int]] = {}
        self._carry = b""
        self._eof = False
        self._thread = threading.Thread(target=self._pump, name="sandbox-output", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                chunk = b""
            with self._cond:
                if not chunk:
                    self._take(self._carry)
                    self._carry = b""
                    self._eof = True
                    self._cond.notify_all()
                    os.close(self._fd)  # only this thread ever reads it
                    return
                self._scan(self._carry + chunk)
                self._cond.notify_all()

    def _scan(self, data: bytes) -> None:
        while True:
            at = data.find(SYNC_PREFIX)
            if at < 0:
                break
            end = data.find(b"\0", at + len(SYNC_PREFIX))
            if end < 0:
                self._take(data[:at])
                self._carry = data[at:]
                if len(self._carry) > self._CARRY:  # not a marker after all
                    self._take(self._carry)
                    self._carry = b""
                return
            self._take(data[:at])
            number = data[at + len(SYNC_PREFIX) : end]
            if number.isdigit() and len(number) < 20:
                self._marks[int(number)] = self._done()
            else:
                self._take(data[at : end + 1])
            data = data[end + 1 :]
        keep = min(len(data), len(SYNC_PREFIX) - 1)
        tail = data.rfind(b"\0", len(data) - keep) if keep else -1
        if tail >= 0 and SYNC_PREFIX.startswith(data[tail:]):
            self._take(data[:tail])
            self._carry = data[tail:]
        else:
            self._take(data)
            self._carry = b""

    def begin(self, cap: int) -> None:
        with self._cond:  # the pump thread reads the cap as it takes each chunk
            self.cap = cap

    def collect(self, seq: int | None, wait: float) -> tuple[bytes, int]:
        deadline = time.monotonic() + wait
        with self._cond:
            while (seq is None or seq not in self._marks) and not self._eof:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            if seq is not None and seq in self._marks:
                for old in [n for n in self._marks if n < seq]:
                    del self._marks[old]
                return self._marks.pop(seq)
            return self._done()

    def close(self) -> None:
        """Nothing to do: the thread closes the pipe at EOF, once the child and whatever
        it started have exited (closing it under a blocked read could hit a reused fd)."""


@dataclass
class Child:
    """One sandbox child: its process, reply socket, output, and generation number.

    `gen` numbers the children of a `Sandbox` (1, 2, ...); handles a child makes carry it.
    `traceback_path` is the file into which the child dumps its stacks when asked
    (`request_dump`), before it is ended for a timeout, as the grader reads it.
    `pid` is the child's pid as its backend knows it (the zygote's `reap` takes it);
    `host_pid` the pid that names it in the grader's own pid namespace, which is what
    signals go to. They differ when the zygote runs in a pid namespace of its own
    (`grader.sandbox.isolated`), and `host_pid` is None when the child could not be found there:
    it is then never signalled, since its own pid would name another process here.
    """

    pid: int
    conn: socket.socket
    output: Output
    gen: int
    traceback_path: str = ""
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    host_pid: int | None = None

    def kill(self) -> None:
        """End the child, its process group and every descendant (even one that left the
        group with setsid())."""
        if self.host_pid is not None:
            kill_tree(self.host_pid)
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass

    def request_dump(self) -> None:
        """Ask the child to write its stacks into `traceback_path` (see `stackdump.StackDump`)."""
        if DUMP_SIGNAL is not None and self.host_pid is not None:
            try:
                os.kill(self.host_pid, DUMP_SIGNAL)
            except OSError:
                pass

    def release(self) -> None:
        """Close the grader's ends of the socket and the output pipe."""
        self.conn.close()
        self.output.close()
