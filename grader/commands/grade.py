"""`minillm grade SUBMISSION...`: grade submissions against this course, public and hidden checks.

    minillm grade alice/ bob.zip carol/ --labs lab04,lab07 --format csv --out grades.csv
    minillm grade . --format github                      # in a student repository's CI
    minillm grade /autograder/submission --format gradescope \\
        --out /autograder/results/results.json
    minillm grade submissions/* --jobs 4 --report class.html
    minillm grade --roster roster.csv --deadline 2026-12-15T23:59+08:00 \\
        --late-policy penalty:per-day=10%,cap=50%,grace=15m --format gradebook --out book.csv
    minillm grade --roster roster.csv --previous term.json --format json --out term2.json

A submission is a folder, a git checkout or a zip; only its ``labs/*/student.py`` files are
used, everything else comes from a pristine copy of this course (see `grader.grade`).
``--out`` is rewritten as results arrive (test by test), so a stopped run leaves what
finished. With
``--format github`` the log and annotations go to stdout, the Markdown summary to
``$GITHUB_STEP_SUMMARY`` (and to ``--out`` if given).

A term's options: ``--deadline`` (`grader.grade.late`: a git checkout is graded at its last
commit on time, or, with a penalty policy, at HEAD less the penalty), ``--roster``
(`grader.grade.roster`: students joined to submissions by path; with no SUBMISSION, every
roster submission is graded), ``--format gradebook`` (`grader.render.gradebook`), and
``--previous`` with ``--only-lab``/``--only-test`` (`grader.grade.regrade`: only what
changed runs, the rest is merged from the previous JSON result).

Exit status: 0 every submission graded with full marks; 1 graded, some short of full
marks; 2 a usage error (or isolation asked for but unavailable); 3 some submission could
not be graded (see its error); 128 + the signal's number (143 for SIGTERM, 130 for SIGINT)
when the run was stopped: the workers and the student code under them are killed, the
result keeps every test that finished, marks everything else as not graded and says it is
not complete, and one line on stderr says so.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from grader.i18n import LANGS, Lang, default_lang

if TYPE_CHECKING:
    from grader.grade.batch import StopEvent

__all__ = ["grade"]

FORMATS = ("text", "json", "junit", "gradescope", "github", "csv", "gradebook")
_WRITE_EVERY = 0.5  # seconds between rewrites of --out while the run goes


def _labs(spec: str | None) -> tuple[str, ...]:
    from grader.labs import UnknownLab, all_labs, resolve_lab

    if not spec:
        return tuple(i.id for i in all_labs())
    try:
        found = [resolve_lab(s).id for s in spec.replace(" ", ",").split(",") if s]
    except UnknownLab as e:
        raise click.UsageError(str(e)) from None
    return tuple(dict.fromkeys(found))


@click.command()
@click.argument("submissions", nargs=-1, type=click.Path(path_type=Path))
@click.option("--labs", "labs_spec", help="Labs to grade, e.g. lab04,lab07 (default: all).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the result here (rewritten as results arrive) instead of stdout.",
)
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option(
    "--lanes",
    type=click.IntRange(1, 64),
    help="Labs of one submission graded at once, under bwrap "
    "(default: its share of the cores, at most 4).",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a class report: one self-contained HTML page.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1.0),
    default=None,
    help="Seconds one submission may take in all (default: 60 + 30 per lab).",
)
@click.option(
    "--no-isolation",
    is_flag=True,
    help="Run without the isolation backend (trusting the submissions).",
)
@click.option(
    "--isolation",
    "level",
    type=click.Choice(("auto", "bwrap", "uid")),
    default="auto",
    show_default=True,
    help="bwrap: bubblewrap namespaces; uid: as root, each sandbox as an unprivileged uid "
    "(where bwrap cannot run); auto: bwrap, else uid.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
    default=None,
    help="Derive each submission's seed from this one and its name (default: at random).",
)
@click.option("--lang", type=click.Choice(LANGS), default=None, help="Language of the reports.")
@click.option(
    "--deadline",
    help="Grade each git checkout's last commit at or before this time (ISO 8601 with its "
    "offset, e.g. 2026-12-15T23:59+08:00) and report later commits as late.",
)
@click.option(
    "--late-policy",
    "late_spec",
    default="on-time",
    show_default=True,
    help="on-time[:grace=15m] (grade the last version on time), or "
    "penalty:per-day=10%,cap=50%,grace=15m (grade the newest, less the penalty).",
)
@click.option(
    "--roster",
    type=click.Path(dir_okay=False, path_type=Path),
    help="CSV with a header: id,name,email,submission[,submitted_at]; joins students to "
    "submissions by path (without SUBMISSION: grade every submission it names).",
)
@click.option(
    "--gradebook-style",
    type=click.Choice(("canvas", "moodle")),
    default="canvas",
    show_default=True,
    help="The layout of --format gradebook.",
)
@click.option(
    "--previous",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A --format json result: regrade only what changed since, merge the rest.",
)
@click.option("--only-lab", "only_lab", help="With --previous: rerun these labs (lab04,lab07).")
@click.option("--only-test", "only_test", help="With --previous: rerun one test (ID or labNN:ID).")
def grade(
    submissions: tuple[Path, ...],
    labs_spec: str | None,
    fmt: str,
    out: Path | None,
    jobs: int,
    lanes: int | None,
    report: Path | None,
    timeout: float | None,
    no_isolation: bool,
    level: str,
    seed: int | None,
    lang: Lang | None,
    deadline: str | None,
    late_spec: str,
    roster: Path | None,
    gradebook_style: str,
    previous: Path | None,
    only_lab: str | None,
    only_test: str | None,
) -> None:
    """Grade SUBMISSION... (folders, git checkouts or zips) with public and hidden checks."""
    from grader.grade.backends import IsolationUnavailable, choose_isolation
    from grader.grade.course import RunFolder
    from grader.labs import course_root
    from grader.render.term import prepare

    stdout = prepare(sys.stdout)
    chosen: Lang = lang or default_lang(getattr(stdout, "encoding", None))
    labs = _labs(labs_spec)
    if not labs:
        raise click.UsageError(f"no labs to grade in {course_root()}")
    unavailable: IsolationUnavailable | None = None
    try:
        backend, _ = choose_isolation(not no_isolation, level)
    except IsolationUnavailable as e:  # said below, once the other options are checked
        backend, unavailable = "none", e
    with contextlib.ExitStack() as stack:
        folder = None
        if unavailable is None:  # the course copy compiles while the rest of the grader loads
            folder = stack.enter_context(RunFolder(course_root(), labs, backend))
        from grader.grade.batch import StopEvent, grade_batch, write_atomic
        from grader.grade.checks import check_hidden
        from grader.grade.run import GradeOptions
        from grader.render import formats
        from grader.render.github import render_github_summary
        from grader.render.gradebook import render_gradebook
        from grader.render.text import NOT_ISOLATED
        from grader.results import BatchResult

        if problems := check_hidden(course_root(), labs):  # a broken hidden.py: one line each
            click.echo("\n".join(problems), err=True)
            sys.exit(2)
        term = _term(deadline, late_spec, roster, previous, (only_lab, only_test), labs)
        submissions = _submissions(submissions, term["roster"], fmt)
        if fmt == "gradescope" and len(submissions) != 1:
            raise click.UsageError("--format gradescope grades exactly one submission")
        if unavailable is not None:
            click.echo(str(unavailable), err=True)
            sys.exit(2)
        if backend == "uid":  # the children run as another user: the hidden checks are root's
            from grader.sandbox.uidlevel import protect

            protect(course_root() / "solutions")
        to_stdout = out is None or fmt == "github"
        if backend == "none" and not (to_stdout and fmt in ("text", "github")):
            click.echo(NOT_ISOLATED[chosen], err=True)
        renderer = formats()[fmt]
        if fmt == "gradebook":
            renderer = functools.partial(render_gradebook, style=gradebook_style)
        target = None if fmt == "github" else out

        def write(batch: BatchResult) -> None:
            if target is not None:
                write_atomic(target, renderer(batch, chosen))

        results = tuple(p.resolve().parent for p in (out, report) if p is not None)
        options = GradeOptions(labs, jobs, timeout, backend, seed, results, **term, lanes=lanes)
        stop = StopEvent()
        with _stop_on_signals(stop), _Progress(len(submissions)) as progress:

            def changed(batch: BatchResult) -> None:
                progress.update(batch)
                write(batch)

            batch = grade_batch(
                list(submissions),
                course_root(),
                options,
                on_change=changed,
                interval=_WRITE_EVERY,
                stop=stop,
                folder=folder,
            )
        stack.close()  # the run's folder is removed before the reports are written
        if target is None:
            stdout.write(renderer(batch, chosen))
            stdout.flush()
        if fmt == "github":
            summary = render_github_summary(batch, chosen)
            if out is not None:
                write_atomic(out, summary)
            step = os.environ.get("GITHUB_STEP_SUMMARY")
            if step:
                with open(step, "a", encoding="utf-8") as f:
                    f.write(summary)
        if report is not None:
            from grader.render.classreport import render_class_report

            write_atomic(report, render_class_report(batch, chosen))
        if not batch.complete:
            graded = batch.finished
            where = f"; the result is in {out}" if out is not None else ""
            click.echo(
                f"minillm grade: stopped by {stop.reason}: {graded} of {len(submissions)} "
                f"submission(s) graded, the rest marked not graded{where}",
                err=True,
            )
            sys.exit(128 + _SIGNALS.get(stop.reason, signal.SIGTERM))
        if any(s.error and not s.missing for s in batch.submissions):
            sys.exit(3)
        sys.exit(0 if all(s.score == s.max_score for s in batch.submissions) else 1)


def _term(
    deadline: str | None,
    late_spec: str,
    roster: Path | None,
    previous: Path | None,
    only: tuple[str | None, str | None],
    labs: tuple[str, ...],
) -> dict[str, Any]:
    """The term's fields of `GradeOptions`, every option checked (a `click.UsageError`)."""
    from grader.grade.late import parse_policy, parse_time
    from grader.grade.regrade import load_previous
    from grader.grade.roster import read_roster

    out: dict[str, Any] = {"roster": None, "previous": None, "only": ("", "")}
    try:
        out["late"] = parse_policy(late_spec)
        if deadline is not None:
            out["due"] = parse_time(deadline)
        elif late_spec.strip() != "on-time":
            raise click.UsageError("--late-policy needs --deadline")
        if roster is not None:
            out["roster"] = read_roster(roster)
        if previous is not None:
            out["previous"] = load_previous(previous)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    only_lab, only_test = only
    if (only_lab or only_test) and previous is None:
        raise click.UsageError("--only-lab and --only-test regrade a part: they need --previous")
    chosen = list(_labs(only_lab)) if only_lab else []
    if only_lab and not set(chosen) <= set(labs):
        raise click.UsageError(f"--only-lab {only_lab}: not among the labs graded ({labs})")
    if only_test:
        chosen.append(_test_lab(only_test, labs))
        only_test = only_test.rpartition(":")[2]
    out["only"] = (",".join(dict.fromkeys(chosen)), only_test or "")
    return out


def _test_lab(spec: str, labs: tuple[str, ...]) -> str:
    """The lab holding the test `spec` (``ID`` or ``labNN:ID``) among `labs`."""
    from grader.grade.checks import load_graded_lab
    from grader.labs import resolve_lab

    lab_part, _, test_id = spec.rpartition(":")
    where = _labs(lab_part) if lab_part else labs
    found = [
        lab
        for lab in where
        if any(t.id == test_id for t in load_graded_lab(resolve_lab(lab)).tests)
    ]
    if len(found) != 1 or found[0] not in labs:
        shown = ", ".join(found if len(found) > 1 else where)
        why = (
            f"is a test of {shown}: write labNN:ID" if len(found) > 1 else f"is no test of {shown}"
        )
        raise click.UsageError(f"--only-test {spec}: {test_id!r} {why}")
    return found[0]


def _submissions(given: tuple[Path, ...], roster: Any, fmt: str) -> tuple[Path, ...]:
    """The submissions to grade: those given, or every one the roster names that exists;
    a warning on stderr for each given one that is not on the roster."""
    if roster is None:
        if not given:
            raise click.UsageError("give SUBMISSION... or --roster")
        if fmt == "gradebook":
            raise click.UsageError("--format gradebook needs --roster (one row per student)")
        return given
    if not given:
        return tuple(Path(s.path) for s in roster.students if s.path and os.path.exists(s.path))
    for path in given:
        if roster.find(path) is None:
            click.echo(
                f"minillm grade: warning: {path} is not on the roster: graded, marked "
                "'not on the roster'",
                err=True,
            )
    return given


_SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}


def _stop_on_signals(stop: StopEvent) -> contextlib.AbstractContextManager[None]:
    """From now until the returned context exits, SIGTERM (a CI job cancelled) and SIGINT
    set `stop` instead of killing the process (only in the main thread: elsewhere nothing
    changes). The context puts the previous handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.stop(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in _SIGNALS.values()}

    @contextlib.contextmanager
    def restored() -> Iterator[None]:
        try:
            yield
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old)

    return restored()


class _Progress:
    """A rich progress bar on stderr while a terminal watches; silent otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: object | None = None
        self.task: object = None

    def __enter__(self) -> _Progress:
        if sys.stderr.isatty() and not os.environ.get("NO_COLOR"):
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            bar = Progress(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
                transient=True,
            )
            bar.start()
            self.task = bar.add_task("", total=self.total)
            self.bar = bar
        return self

    def update(self, batch: object) -> None:
        if self.bar is None:  # silent: not even rich is imported
            return
        from rich.progress import Progress, TaskID

        from grader.results import BatchResult

        if not isinstance(self.bar, Progress) or not isinstance(batch, BatchResult):
            return
        done = sum(1 for s in batch.submissions if s.done)
        running = [s.name for s in batch.submissions if not s.done]
        task = self.task if isinstance(self.task, int) else 0
        self.bar.update(TaskID(task), completed=done, description=", ".join(running[:3]))

    def __exit__(self, *exc: object) -> None:
        if self.bar is None:
            return
        from rich.progress import Progress

        if isinstance(self.bar, Progress):
            self.bar.stop()
