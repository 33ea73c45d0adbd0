"""How one submission's phases are laid out in time: each sandbox started ahead of its
phase, and, where the machine has cores to spare, several phases at once.

A phase (one lab's public tests, or its hidden ones) runs in a sandbox of its own, and
starting one costs 20-30 ms (a template's phase is a round trip to another process, then a
control group and a scratch folder): `started_ahead` makes and starts the next phase's
sandbox in a thread while the current phase runs. A submission graded alone on a machine of
several cores runs its phases in lanes (`in_lanes`): each lane a thread taking the next
phase from a shared queue, so that a long lab does not hold the short ones up. How many:
`lanes_for`, from the cores and the submissions graded at once.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from grader.sandbox.client import Sandbox

__all__ = ["MAX_LANES", "in_lanes", "lanes_for", "started_ahead"]

T = TypeVar("T")
MAX_LANES = 4  # each lane holds a student's process and its memory: a cap on what one takes


def lanes_for(jobs: int, submissions: int, cpus: int | None = None) -> int:
    """The phases one submission runs at the same time: the cores (`cpus`, default those
    this process may use) shared out among the submissions graded at once (``--jobs``, at
    most `submissions`), 1 to `MAX_LANES`."""
    at_once = max(1, min(jobs, submissions))
    return max(1, min(MAX_LANES, (cpus or _cpus()) // at_once))


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        return os.cpu_count() or 1


def started_ahead(
    items: Iterable[T], make: Callable[[T], Sandbox]
) -> Generator[tuple[T, Sandbox], None, None]:
    """Each of `items` with a started sandbox of its own (``make(item)``, then ``start``),
    in order; the caller closes each. The next item is taken, and its sandbox made and
    started, in a thread of its own while the caller works with the current one. What
    `make` or ``start`` raised is raised here when that sandbox is due; a sandbox made
    ahead and never handed out is closed when the iteration ends (a caller that may stop
    early closes the iterator: ``contextlib.closing``)."""
    todo = iter(items)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="next-sandbox") as pool:

        def next_one() -> tuple[T, Future[Sandbox]] | None:
            try:
                item = next(todo)
            except StopIteration:
                return None
            return item, pool.submit(_started, make, item)

        ahead = next_one()
        try:
            while ahead is not None:
                (item, started), ahead = ahead, None
                sandbox = started.result()
                ahead = next_one()
                yield item, sandbox
        finally:
            if ahead is not None:
                with contextlib.suppress(Exception):
                    ahead[1].result().close()


def _started(make: Callable[[T], Sandbox], item: T) -> Sandbox:
    sandbox = make(item)
    try:
        sandbox.start()
    except BaseException:
        sandbox.close()
        raise
    return sandbox


def in_lanes(
    items: Sequence[T],
    lanes: int,
    make: Callable[[T], Sandbox],
    work: Callable[[T, Sandbox], None],
) -> None:
    """``work(item, sandbox)`` for every one of `items`, in up to `lanes` threads at once,
    each taking the next item from a shared queue with its sandbox started ahead
    (`started_ahead`); it returns once every item's work is done. `work` closes the
    sandbox. Once a lane fails, the others work no new item (one already taken and started
    is closed), and the first failure is raised when all have stopped."""
    todo: queue.SimpleQueue[T] = queue.SimpleQueue()
    for item in items:
        todo.put(item)
    failed = threading.Event()

    def taken() -> Iterator[T]:
        while not failed.is_set():
            try:
                yield todo.get_nowait()
            except queue.Empty:
                return

    def lane() -> None:
        try:
            with contextlib.closing(started_ahead(taken(), make)) as ahead:
                for item, sandbox in ahead:
                    if failed.is_set():  # taken before another lane failed: not worked
                        sandbox.close()
                        return
                    try:
                        work(item, sandbox)
                    except BaseException:
                        failed.set()  # before this lane's sandbox made ahead is closed
                        raise
        except BaseException:
            failed.set()
            raise

    count = max(1, min(lanes, len(items)))
    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="lane") as pool:
        futures = [pool.submit(lane) for _ in range(count)]
    for future in futures:
        future.result()
