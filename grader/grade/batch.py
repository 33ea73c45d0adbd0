"""Grade many submissions in parallel, each in a worker process of its own.

`grade_batch` copies the course once, into a `RunFolder` (the copy compiles in a process of
its own while the batch loads its checks), then runs up to `jobs` workers at a time
(``python -E -B -m grader.grade.worker``, started from the compiled copy). Each worker reports
a lab's tests so far after each test, and every lab as it ends; `on_change` sees the
growing `BatchResult` after each report, so a caller can redraw a progress bar and rewrite
its result file (`write_atomic`). Nothing a submission does stops the batch: a submission
that cannot be read, a worker that crashes, prints garbage or runs out of time
(`GradeOptions.timeout`: CPU seconds of its own tree where they can be measured, see
`over_budget`) ends as that submission's `error`, with the tests it finished and every
other test at 0 points.

A run can be stopped (`grade_batch(..., stop=event)`, which ``minillm grade`` sets on
SIGTERM or SIGINT): the workers and everything under them are killed, the tests that
finished are kept, every other test and every submission not reached is an error row
("not graded"), and the batch returned (and shown to `on_change`) has `complete` false.

With a roster (`GradeOptions.roster`), each submission is joined to its student by path,
and every student whose submission is not among `paths` is a row of its own, "no
submission", 0 points (`SubmissionResult.missing`), after the submissions, in the
roster's order.
"""

from __future__ import annotations

import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.grade.course import RunFolder
from grader.grade.lanes import lanes_for
from grader.grade.late import format_time
from grader.grade.run import GradeOptions
from grader.grade.supervisor import SubmissionState, Supervisor
from grader.grade.term import TermState
from grader.i18n import tr
from grader.results import BatchResult

__all__ = ["ChangePace", "StopEvent", "display_names", "grade_batch", "write_atomic"]

CHANGE_SHARE = 0.1  # the most of its time the batch's thread spends in `on_change`


class ChangePace:
    """When the batch shows its progress again (`grade_batch`'s `on_change`): at most every
    `interval` seconds, and at most `CHANGE_SHARE` of the time. A class's report grows
    with every submission (a few MB of indented JSON for 40 of them, rewritten whole each
    time), and this thread shares the cores with the workers.

    Example:
        >>> now = [100.0]
        >>> pace = ChangePace(0.25, clock=lambda: now[0])
        >>> pace.due()
        True
        >>> def slow_write() -> None:
        ...     now[0] += 2.0  # a report that takes 2 s to write
        >>> pace.run(slow_write)
        >>> now[0] += 17.0
        >>> pace.due()  # 18 s of batch for each 2 s of writing
        False
        >>> now[0] += 1.0
        >>> pace.due()
        True
    """

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self.clock = interval, clock
        self.last, self.gap = float("-inf"), interval

    def due(self) -> bool:
        """Whether enough time has passed since the last call ended."""
        return self.clock() - self.last >= self.gap

    def run(self, show: Callable[[], object]) -> None:
        """Call `show` now, and pace the next call by what this one cost."""
        began = self.clock()
        show()
        self.last = self.clock()
        spent = self.last - began
        self.gap = max(self.interval, spent * (1 / CHANGE_SHARE - 1))


class StopEvent(threading.Event):
    """Asks a running batch to stop; `reason` says why (``"SIGTERM"``), for the reports."""

    def __init__(self) -> None:
        super().__init__()
        self.reason = ""

    def stop(self, reason: str) -> None:
        """Set the event (the first reason is kept)."""
        self.reason = self.reason or reason
        self.set()


def display_names(paths: Sequence[Path]) -> list[str]:
    """A unique name per submission: its folder or zip name, ``-2``, ``-3`` for repeats.

    Names come from the paths as given, made absolute without following links (a path
    that is a link loop, or that does not exist, still has a name; reading it is the
    worker's business, and its error is that submission's row)."""
    names: list[str] = []
    for p in paths:
        base = os.path.basename(os.path.normpath(os.path.abspath(p))).removesuffix(".zip")
        base = base or str(p)
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
    return names


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` at once: a reader (or a killed run) sees old or new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _join_roster(
    paths: Sequence[Path], states: list[SubmissionState], options: GradeOptions
) -> list[SubmissionState]:
    """Join each submission to its roster student; the rows of the students without one."""
    roster = options.roster
    if roster is None:
        return []
    found = set()
    for path, state in zip(paths, states, strict=True):
        student = roster.find(path)
        state.term = TermState(student, student is not None)
        found.add(student)
    names = [s.name for s in states]
    absent: list[SubmissionState] = []
    for student in roster.students:
        if student in found:
            continue
        base = os.path.basename(student.path) if student.path else student.id
        name, n = base or student.id, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
        state = SubmissionState(name, student.path, started=time.monotonic(), done=True)
        state.term = TermState(student, True, missing=True)
        state.fail(tr("没有提交", "no submission"))
        absent.append(state)
    return absent


def grade_batch(
    paths: Sequence[Path],
    source: Path,
    options: GradeOptions,
    *,
    on_change: Callable[[BatchResult], None] | None = None,
    interval: float = 0.25,
    work_dir: Path | None = None,
    stop: StopEvent | None = None,
    folder: RunFolder | None = None,
) -> BatchResult:
    """Grade `paths` against the course at `source`; the final `BatchResult`.

    Args:
        paths: submissions (folders, git checkouts, zips), reported in this order.
        source: the instructor's course (the folder that holds ``grader/``).
        options: labs, parallelism, time limit and isolation backend.
        on_change: called (in this thread) with the batch so far when it changed, at most
            every `interval` seconds and at most a tenth of the time (`ChangePace`), and
            once more with the complete batch at the end.
        interval: see `on_change`.
        work_dir: where the run's scratch folder goes (default: the system's temp folder).
        stop: when set, the run stops (see the module docstring); the batch then holds
            every submission and `complete` is false.
        folder: the run's folder, made by the caller for this source, these labs and this
            isolation, and closed by the caller; by default one is made and removed here.

    Raises:
        ValueError: `folder` was made for another course, other labs or another isolation.
    """
    own = folder is None
    if folder is None:
        folder = RunFolder(source, options.labs, options.isolation, work_dir)
    made_for = (folder.source, folder.labs, folder.isolation)
    if made_for != (source, options.labs, options.isolation):
        raise ValueError("the run folder was made for another course, labs or isolation")
    try:
        lanes = options.lanes or lanes_for(options.jobs, len(paths))
        runner = Supervisor(folder.course, folder.path, options, source, lanes)
        names = display_names(paths)
        states = [
            SubmissionState(n, str(p), seed=options.seed_of(n))
            for n, p in zip(names, paths, strict=True)
        ]
        absent = _join_roster(paths, states, options)
        batch = BatchResult(list(options.labs), total=len(paths) + len(absent))
        batch.isolated = options.isolation != "none"
        batch.isolation = options.isolation
        if options.due is not None:
            batch.deadline, batch.late_policy = format_time(options.due), options.late.text
        batch.previous = options.previous.path if options.previous is not None else ""

        def snapshot() -> BatchResult:
            shown = [s for s in states if s.started or runner.stopped] + absent
            batch.submissions = [runner.submission(s) for s in shown]
            return batch

        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            for i, (path, state) in enumerate(zip(paths, states, strict=True)):
                pool.submit(runner.grade, i, path, state)
            dirty, pace = False, ChangePace(interval)
            while not all(s.done for s in states):
                if stop is not None and stop.is_set() and not runner.stopped:
                    runner.stop(stop.reason or "stopped")
                try:
                    runner.events.get(timeout=0.1)
                    dirty = True
                except queue.Empty:
                    pass
                if dirty and on_change is not None and pace.due():
                    pace.run(lambda: on_change(snapshot()))
                    dirty = False
        batch = snapshot()
        batch.complete, batch.stopped = not runner.stopped, runner.stopped
        batch.finished = sum(1 for s in states if s.done and not s.cut)
        if on_change is not None:
            on_change(batch)
        return batch
    finally:
        if own:
            folder.close()
