"""The sandbox child's side of "where was it stuck": dumping its stacks when time is up.

`StackDump` writes the stacks of all the child's threads into its traceback file when a
call (or the import) runs out of time; `grader.sandbox.stacks` reads that file on the
grader's side and keeps the student's frames. What this module does not do: decide when
time is up (the grader does, and sends `DUMP_SIGNAL` or a ``dump_at`` with the request)
or parse the dump. The mechanism is the standard library's `faulthandler`, the one
``pytest --timeout`` (pytest-timeout's signal method) and ``python -X faulthandler`` use.

Example:
    >>> dump = StackDump("")  # no traceback file: arming and disarming do nothing
    >>> dump.arm(1.0); dump.disarm(); dump.file is None
    True
"""

from __future__ import annotations

import faulthandler
from typing import Any, BinaryIO

from grader.sandbox.limits import DUMP_SIGNAL

__all__ = ["StackDump"]


class StackDump:
    """Writes the stacks of all threads into the traceback file when a call runs out of time.

    Where there are signals (POSIX), `faulthandler` dumps on `DUMP_SIGNAL`, which the
    grader sends just before it ends a child that ran out of time: nothing runs until then,
    and a call that finishes is never dumped. Elsewhere (Windows) the dump is armed per
    request for the moment just before the grader would give up (`dump_at`, sent by the
    grader) and disarmed when the request returns. The dump is written without the GIL, so
    it comes even while the student's code spins in Python or in C; reading a running
    thread's frames that way is not safe, which is why it happens only at the very end.
    """

    def __init__(self, path: str) -> None:
        self.file: BinaryIO | None = None
        if not path:
            return
        try:
            self.file = open(path, "wb", buffering=0)  # noqa: SIM115 - kept open
            if DUMP_SIGNAL is not None:
                faulthandler.register(DUMP_SIGNAL, file=self.file, all_threads=True)
        except (OSError, ValueError, RuntimeError):
            self.file = None

    def arm(self, seconds: Any) -> None:
        """Dump once after `seconds`, where there are no signals (else nothing to do)."""
        if DUMP_SIGNAL is not None or self.file is None:
            return
        if not isinstance(seconds, int | float) or seconds <= 0:
            return
        try:
            self.file.seek(0)
            self.file.truncate()
            faulthandler.dump_traceback_later(float(seconds), repeat=False, file=self.file)
        except (OSError, ValueError):
            pass

    def disarm(self) -> None:
        """Cancel a dump that has not happened yet."""
        if DUMP_SIGNAL is None and self.file is not None:
            faulthandler.cancel_dump_traceback_later()
