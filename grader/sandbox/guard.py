"""Guards of the grader's own process against the code it runs (trust level 1).

On the student's machine (`verify`, `status`, `watch`, the pytest plugin) the student's
code runs in a sandbox child, but as the same user, next to the grader's own files. What
is cheap enough to do on every run is done here, so that the student's code cannot reach
into the process that judges it through the files that process reads later:

- `harden_imports`: the course's own Python files (``grader/``, ``framework/``, every
  ``verify.py``) are compiled from their source on every import, never loaded from a
  ``__pycache__`` beside them (a planted ``.pyc`` stamped with its source's time would run
  unseen), and the grader writes no bytecode anywhere;
- `preload`: every module the grader imports lazily on its way to a report (numpy's
  random module, the JSON encoder, rich and its renderers) is imported before the first
  call into student code, so a library file changed while that code ran, and put back
  before anyone looks, is never read; and any module imported later still (a lab's check
  that imports something only when it runs) is refused if its file changed after that
  moment: a file's change time (ctime) cannot be set back, unlike its modification time;
- `interruptible`: SIGTERM (and SIGHUP) end the run like Ctrl-C does, as an `Interrupted`
  exception, so that the sandbox is closed, the scratch folder removed and the tests that
  finished are still reported;
- `adopt_orphans` and `end_strays`: the grader adopts every orphaned process below it
  (Linux `PR_SET_CHILD_SUBREAPER`), so that a process the student's code started, which
  then killed the sandbox's zygote to get away, still ends before the report is written.

What it does not do: stop a process of the same user from editing these files between two
runs, debugging the grader (see `grader.sandbox.limits.make_undumpable`) or signalling it.
That is the second trust level, `minillm grade`, which runs every submission in its own
namespaces under bubblewrap (see `grader.sandbox.isolated`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import io
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.machinery import ModuleSpec, SourceFileLoader
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

__all__ = [
    "Interrupted",
    "adopt_orphans",
    "end_strays",
    "harden_imports",
    "interruptible",
    "preload",
    "signal_name",
    "source_only_dirs",
]

# Course folders whose Python files are always compiled from source (not site-packages:
# those were compiled when they were installed and are trusted as much as their source).
_COURSE_DIRS = ("grader", "framework", "labs", "solutions", "tests")

# Imported lazily somewhere between the first call into student code and the report.
_LATE_MODULES = (
    "numpy.random",
    "json",
    "json.decoder",
    "json.encoder",
    "encodings.utf_8",
    "encodings.ascii",
    "encodings.latin_1",
    "encodings.idna",  # http.client's host names (lab10's checks)
    "rich",
    "rich.box",
    "rich.console",
    "rich.markup",
    "rich.segment",
    "rich.style",
    "rich.table",
    "rich.text",
    "grader.render.lab",
    "grader.render.term",
)

_source_only: tuple[str, ...] = ()
_guarded = False  # `harden_imports` was called: this is a grader's own process
_original_path_stats = SourceFileLoader.path_stats


def source_only_dirs() -> tuple[str, ...]:
    """The folders whose modules `harden_imports` compiles from source (with a trailing
    separator; empty until it is called)."""
    return _source_only


def _path_stats(self: SourceFileLoader, path: str) -> Mapping[str, Any]:
    # No stats for the course's files: the loader then neither reads nor writes a .pyc.
    if os.path.abspath(path).startswith(_source_only):
        raise OSError("the grader compiles the course's files from source")
    return _original_path_stats(self, path)


def harden_imports(root: Path | None = None, *, from_source: bool = True) -> None:
    """Write no bytecode, and compile the course's own files from their source; from the
    first call into student code on (`preload`), refuse modules changed since.

    `root`: the course (default: the folder that holds this package). Python finds a
    module's cached bytecode through the source's size and modification time, which any
    process of the user can copy onto a planted file; for the folders of the course it is
    never consulted (`SourceFileLoader.path_stats` says nothing about them), which costs a
    fraction of a second per run. `from_source=False` keeps the caches, for a course copy
    that the code being graded cannot write (`grader.sandbox.isolated`).
    """
    global _source_only, _guarded
    sys.dont_write_bytecode = True
    _guarded = True
    if not from_source:
        return
    base = (root or Path(__file__).resolve().parents[2]).resolve()
    _source_only = tuple(str(base / name) + os.sep for name in _COURSE_DIRS)
    SourceFileLoader.path_stats = _path_stats  # type: ignore[method-assign]


def preload() -> None:
    """Import, now, everything the grader's own process imports later on its way to a
    report, and let rich import its lazy parts by rendering once into a string. In a
    process guarded by `harden_imports`, a module whose file changes from now on is
    refused (`_LateImports`)."""
    for name in _LATE_MODULES:
        importlib.import_module(name)
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor", width=60)
    table = Table("a", "b")
    table.add_row(Text("[PASS] ✓", style="bold green"), "中文…")
    console.print(Text("[FAIL]", style="red"), table)
    import numpy as np

    np.random.default_rng(0).standard_normal(2)
    if _guarded:  # a grader's own process (`harden_imports`), not a test session
        _LateImports.arm()


class _LateImports(importlib.abc.MetaPathFinder):
    """Refuses a module whose source or bytecode changed after student code started."""

    since: float | None = None

    @classmethod
    def arm(cls) -> None:
        if cls.since is None:
            cls.since = _file_clock_now()
            sys.meta_path.insert(0, cls())

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        since = type(self).since
        if since is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            for file in (spec.origin, spec.cached):
                if file and os.path.isabs(file) and _changed_since(file, since):
                    raise ImportError(
                        f"{file} changed while the code being graded ran; the grader will "
                        "not import it",
                        name=fullname,
                        path=file,
                    )
            return spec
        return None


def _file_clock_now() -> float:
    """Now, as the kernel stamps files. It may stamp them from a clock up to a tick behind
    `time.time()` (coarse timestamps), so that a file written just after a `time.time()`
    looks older than it: the time is read off a file made now, when one can be."""
    now = time.time()
    try:
        fd, path = tempfile.mkstemp(prefix="minillm-clock-")
    except OSError:
        return now - _TICK
    try:
        return min(now, os.fstat(fd).st_ctime)
    finally:
        os.close(fd)
        os.unlink(path)


_TICK = 0.02  # longer than a kernel tick (4 ms at 250 Hz, 10 ms at 100 Hz)


def _changed_since(path: str, since: float) -> bool:
    try:
        return os.stat(path).st_ctime >= since
    except OSError:
        return False


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal (`signum`: SIGINT, SIGTERM or SIGHUP).

    `result` is what finished, when the runner got that far (a `grader.results.LabResult`).
    """

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signum)
        self.signum = signum
        self.result: Any = None

    @property
    def exit_code(self) -> int:
        """The shell's code for a process ended by this signal (130 for Ctrl-C)."""
        return 128 + int(self.signum)


def signal_name(signum: int) -> str:
    """``SIGTERM`` for 15, and so on (the number where the name is unknown)."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextmanager
def interruptible() -> Iterator[None]:
    """Within, SIGTERM, SIGHUP and SIGINT raise `Interrupted` (a KeyboardInterrupt), so
    that `finally` blocks close the sandbox; the previous handlers come back afterwards."""
    wanted = [signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)]
    previous: dict[int, Any] = {}
    for sig in wanted:
        if sig is None:
            continue
        try:
            previous[sig] = signal.signal(sig, _raise)
        except (ValueError, OSError):  # not the main thread, or not settable here
            pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


_adopting = False


def adopt_orphans() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux; whether it is)."""
    global _adopting
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _adopting = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        pass
    return _adopting


def end_strays(keep: tuple[int, ...] = ()) -> int:
    """Kill every child process of this one (and its tree) but `keep`, and reap them.

    Called where the grader has no child of its own left (its sandbox is closed): any child
    then is a process of the student's code that was orphaned and adopted here. Does
    nothing in a process that did not `adopt_orphans` (a test session, say, whose children
    are its own). Returns how many there were.
    """
    from grader.sandbox.limits import children_of, kill_tree

    if not _adopting:
        return 0
    ended = 0
    for _ in range(20):
        strays = [p for p in children_of(os.getpid()) if p not in keep]
        if not strays:
            break
        for pid in strays:
            kill_tree(pid)
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        ended += len(strays)
    return ended
