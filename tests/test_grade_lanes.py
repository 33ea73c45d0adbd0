"""How a submission's phases are laid out in time (`grader.grade.lanes`, `run_job`).

The next phase's sandbox starts while the current phase runs, never in its way; a
submission graded alone on a machine of several cores runs its phases in lanes, and its
hidden tests still start only once every public phase has ended, with the same verdicts as
one phase after another. Concurrency is shown with events and barriers, never a clock:
each wait has a hang guard, and a version that does the work one thing after another
fails it.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from grader.grade.lanes import MAX_LANES, in_lanes, lanes_for, started_ahead
from grader.grade.run import GradeJob, run_job
from grader.labs import all_labs

ROOT = Path(__file__).resolve().parent.parent
GUARD = 30.0  # seconds: a hang guard only, never reached when the code is right


class Fake:
    """A sandbox that records what is done with it."""

    def __init__(self, name: str, log: list[str], on_start: Any = None) -> None:
        self.name, self.log, self.on_start = name, log, on_start

    def start(self) -> None:
        if self.on_start is not None:
            self.on_start(self)
        self.log.append(f"start {self.name}")

    def close(self) -> None:
        self.log.append(f"close {self.name}")


@pytest.mark.parametrize(
    ("jobs", "submissions", "cpus", "lanes"),
    [(2, 1, 2, 2), (2, 40, 2, 1), (1, 1, 16, MAX_LANES), (8, 40, 4, 1), (2, 1, 1, 1), (4, 2, 8, 4)],
)
def test_lanes_share_the_cores_among_the_submissions_graded_at_once(
    jobs: int, submissions: int, cpus: int, lanes: int
) -> None:
    assert lanes_for(jobs, submissions, cpus) == lanes


def test_the_next_sandbox_starts_while_the_current_phase_runs() -> None:
    log: list[str] = []
    working = threading.Event()

    def waits_for_the_caller(sandbox: Fake) -> None:
        if sandbox.name == "b":  # starts only once the caller works on "a"
            assert working.wait(GUARD), "the next sandbox was started before the phase ran"

    seen = []
    for name, sandbox in started_ahead("ab", lambda n: Fake(n, log, waits_for_the_caller)):
        seen.append(name)
        if name == "a":
            working.set()
        sandbox.close()
    assert seen == ["a", "b"]
    assert log.index("start b") > log.index("start a")
    assert log.count("close a") == log.count("close b") == 1


def test_a_sandbox_that_fails_to_start_fails_its_own_phase_and_is_closed() -> None:
    log: list[str] = []

    def broken(sandbox: Fake) -> None:
        if sandbox.name == "b":
            raise OSError("no namespaces here")

    got = []
    with pytest.raises(OSError, match="no namespaces"):
        for name, sandbox in started_ahead("abc", lambda n: Fake(n, log, broken)):
            got.append(name)  # "a" runs: the failure is raised when "b" is due
            sandbox.close()
    assert got == ["a"]
    assert "close b" in log and "start c" not in log


def test_a_sandbox_started_ahead_and_never_used_is_closed() -> None:
    log: list[str] = []
    with contextlib.closing(started_ahead("abc", lambda n: Fake(n, log))) as ahead:
        for _name, sandbox in ahead:
            sandbox.close()
            break  # the caller stops after "a": "b" was started ahead
    assert "start b" in log and "close b" in log
    assert "start c" not in log


def test_lanes_run_phases_at_once_and_each_exactly_once() -> None:
    log: list[str] = []
    both = threading.Barrier(2, timeout=GUARD)  # broken (and raising) if never two at once
    worked: list[str] = []
    lock = threading.Lock()

    def work(item: str, sandbox: Fake) -> None:
        if item in ("a", "b"):  # the first two, taken by the two lanes
            both.wait()
        with lock:
            worked.append(item)
        sandbox.close()

    in_lanes(list("abcdef"), 2, lambda n: Fake(n, log), work)
    assert sorted(worked) == list("abcdef")
    assert sorted(e for e in log if e.startswith("close")) == [f"close {x}" for x in "abcdef"]


def test_a_failing_lane_stops_the_others_taking_new_phases() -> None:
    log: list[str] = []
    worked: list[str] = []
    discarded = threading.Event()  # the failing lane closed the sandbox it made ahead

    class Tracked(Fake):
        def close(self) -> None:
            super().close()
            if self.name not in worked:
                discarded.set()

    seen: set[int] = set()  # the lanes (threads) whose work saw the failure settled
    late: list[str] = []  # worked by such a lane afterwards

    other_working = threading.Event()  # the other lane works a phase, with one taken ahead

    def work(item: str, sandbox: Fake) -> None:
        if threading.get_ident() in seen:
            late.append(item)
        worked.append(item)
        sandbox.close()
        if item == "a":
            assert other_working.wait(GUARD)
            raise RuntimeError("the checks failed to load")
        other_working.set()
        assert discarded.wait(GUARD)  # the other lane goes on once the failure is settled
        seen.add(threading.get_ident())

    with pytest.raises(RuntimeError, match="failed to load"):
        in_lanes(list("abcdefgh"), 2, lambda n: Tracked(n, log), work)
    started = [e.split()[1] for e in log if e.startswith("start")]
    closed = [e.split()[1] for e in log if e.startswith("close")]
    assert late == [] and "a" in worked and len(worked) == 2, worked  # one per lane
    assert len(started) <= 4, started  # each lane's current phase and the one made ahead
    assert sorted(started) == sorted(closed), log  # every sandbox started was closed


class Recorded:
    """A real sandbox, recording when its tests begin and when it is closed."""

    def __init__(self, phase: tuple[str, bool], events: list[tuple[str, str, bool]]) -> None:
        from grader.sandbox.client import Sandbox

        self.inner, self.phase, self.events = Sandbox(), phase, events

    def session(self, *args: Any, **kwargs: Any) -> Any:
        self.events.append(("run", *self.phase))
        return self.inner.session(*args, **kwargs)

    def close(self) -> None:
        self.inner.close()
        self.events.append(("closed", *self.phase))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _graded(lanes: int, work: Path) -> tuple[list[Any], list[tuple[str, str, bool]]]:
    events: list[tuple[str, str, bool]] = []  # appended from the lanes' threads
    labs = ("lab04", "lab03", "lab07", "lab05")
    for info in all_labs():
        if info.id in labs:
            (work / "labs" / info.id).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(info.solution, work / "labs" / info.id / "student.py")
    job = GradeJob(ROOT, ROOT / "solutions", work, labs, seed=7)
    results: list[Any] = []
    run_job(job, lambda lab, hidden: Recorded((lab, hidden), events), results.append, None, lanes)  # type: ignore[arg-type,return-value]
    return results, events


def test_in_lanes_the_hidden_tests_start_after_every_public_phase_with_the_same_verdicts(
    tmp_path: Path,
) -> None:
    one, _ = _graded(1, tmp_path)
    two, events = _graded(2, tmp_path)
    public_closed = [
        n for n, (what, _, hidden) in enumerate(events) if what == "closed" and not hidden
    ]
    hidden_run = [n for n, (what, _, hidden) in enumerate(events) if what == "run" and hidden]
    assert len(public_closed) == 4 and len(hidden_run) >= 2, events
    assert max(public_closed) < min(hidden_run), events
    verdicts = {
        r.lab: [(t.id, t.status, [c.message for c in t.checks]) for t in r.tests] for r in one
    }
    assert {
        r.lab: [(t.id, t.status, [c.message for c in t.checks]) for t in r.tests] for r in two
    } == verdicts
    assert all(t.status.name == "PASS" for r in two for t in r.tests), verdicts


def test_a_job_carries_its_lanes_to_the_worker() -> None:
    job = GradeJob(ROOT, ROOT / "solutions", ROOT, ("lab04",), seed=3, lanes=3)
    assert GradeJob.loads(job.dumps()) == job
    assert GradeJob.loads(job.dumps().replace('"lanes": 3', '"lanes": 0')).lanes == 1


@pytest.mark.parametrize(
    ("asked", "submissions", "expected"), [(None, 1, 2), (None, 2, 1), (1, 1, 1)]
)
def test_a_batch_gives_each_worker_its_share_of_the_cores(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    asked: int | None,
    submissions: int,
    expected: int,
) -> None:
    import grader.grade.batch as batch
    import grader.grade.supervisor as supervisor
    from grader.grade.run import GradeOptions

    monkeypatch.setattr(batch, "lanes_for", lambda jobs, n: lanes_for(jobs, n, cpus=2))
    seen: list[int] = []
    monkeypatch.setattr(
        supervisor.Supervisor, "_work", lambda self, i, job, state: seen.append(job.lanes)
    )
    subs = []
    for n in range(submissions):
        (tmp_path / f"s{n}" / "labs" / "lab04").mkdir(parents=True)
        (tmp_path / f"s{n}" / "labs" / "lab04" / "student.py").write_text("x = 1\n")
        subs.append(tmp_path / f"s{n}")
    options = GradeOptions(("lab04",), jobs=2, lanes=asked)
    batch.grade_batch(subs, ROOT, options, work_dir=tmp_path)
    assert seen == [expected] * submissions


@pytest.mark.parametrize(("backend", "lanes"), [("bwrap", 3), ("uid", 1), ("none", 1)])
def test_only_sandboxes_that_share_nothing_run_at_once(
    monkeypatch: pytest.MonkeyPatch, backend: str, lanes: int
) -> None:
    # the uid level's sandboxes share the host's /tmp until each is closed and swept, the
    # plain ones the grader's user: theirs run one after another whatever the job asks
    import grader.grade.run as run
    import grader.sandbox.template as template
    from grader.grade.backends import backend_for

    asked: list[int] = []
    monkeypatch.setattr(run, "run_job", lambda *args, **kwargs: asked.append((args[4:] or (1,))[0]))

    class NoTemplate:
        def __init__(self, *args: Any) -> None: ...

        def close(self) -> None: ...

    monkeypatch.setattr(template, "Template", NoTemplate)
    job = GradeJob(ROOT, ROOT / "solutions", ROOT, ("lab04", "lab05"), seed=3, lanes=3)
    backend_for(backend).run(job, lambda result: None)
    assert asked == [lanes]


def test_without_an_affinity_mask_the_cores_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    # macOS and Windows have no os.sched_getaffinity: every core counts
    import os

    import grader.grade.lanes as lanes

    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert lanes._cpus() == 3
    assert lanes_for(1, 1) == 3
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one lane
    assert lanes_for(1, 1) == 1


@pytest.mark.parametrize(
    ("args", "lanes"), [((), None), (("--lanes", "1"), 1), (("--lanes", "3"), 3)]
)
def test_the_grade_command_passes_its_lanes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: tuple[str, ...], lanes: int | None
) -> None:
    from click.testing import CliRunner

    import grader.grade.batch as batch
    from grader.cli import cli

    seen: list[int | None] = []

    class Stop(Exception):
        pass

    def graded(paths: Any, source: Any, options: Any, **kwargs: Any) -> Any:
        seen.append(options.lanes)
        raise Stop

    monkeypatch.setattr(batch, "grade_batch", graded)
    (tmp_path / "sub" / "labs" / "lab04").mkdir(parents=True)
    cmd = ["grade", str(tmp_path / "sub"), "--labs", "lab04", "--no-isolation", *args]
    done = CliRunner().invoke(cli, cmd)
    assert isinstance(done.exception, Stop) and seen == [lanes], done.output


def test_the_grade_command_refuses_no_lanes(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from grader.cli import cli

    done = CliRunner().invoke(cli, ["grade", str(tmp_path), "--lanes", "0", "--no-isolation"])
    assert done.exit_code == 2 and "--lanes" in done.output, done.output
