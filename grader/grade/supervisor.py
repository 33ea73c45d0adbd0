"""One submission of a batch: its worker process, its time budget, its result.

`Supervisor.grade` (called by `grader.grade.batch` in a pool thread per submission) reads
the submission (`grader.grade.submission`, as hostile data, within its time budget),
lays its files out for the worker, starts ``python -E -B -m grader.grade.worker`` from the
pristine course copy and reads its report lines until it says it is done, the budget is
spent (`over_budget`: CPU seconds of its own tree where they can be measured) or the run
is stopped. Nothing a submission does stops the batch: whatever goes wrong is that
submission's `error`, with the tests it finished kept and every other test at 0 points
(`unfinished_lab`). Each lab's numbers, points and visibility come from this process's
own copy of the checks (`own_fields`), never from the worker's report. Around that, the
term's bookkeeping (`grader.grade.term`): the deadline picks the version read and judges
its lateness, and with ``--previous`` the labs whose file and checks are unchanged are
taken from the previous result; a submission with nothing left to run starts no worker.
"""

from __future__ import annotations

import json
import os
import queue
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.dsl import Lab
from grader.grade.checks import load_graded_lab
from grader.grade.course import Course, PendingCourse
from grader.grade.regrade import check_hashes
from grader.grade.run import GradeJob, GradeOptions
from grader.grade.submission import (
    SubmissionError,
    Taken,
    read_submission,
    student_path,
)
from grader.grade.term import TermState, apply, judge, plan, shown
from grader.grade.wire import WireError, lab_from_wire
from grader.i18n import Text, tr
from grader.results import LabResult, Status, SubmissionResult, TestResult
from grader.sandbox.limits import kill_tree, tree_cpu_seconds

__all__ = [
    "MAX_LINE",
    "WALL_FACTOR",
    "SubmissionState",
    "Supervisor",
    "over_budget",
    "own_fields",
    "unfinished_lab",
]

MAX_LINE = 64 * 1024 * 1024  # bytes of one report line from a worker
WALL_FACTOR = 3.0  # a submission's wall time, in units of its CPU-time budget (`over_budget`)
_ENV_KEEP = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR")


@dataclass
class SubmissionState:
    """One submission while the batch runs."""

    name: str
    source: str
    started: float = 0.0
    done: bool = False
    results: dict[str, LabResult] = field(default_factory=dict)
    partial: dict[str, LabResult] = field(default_factory=dict)  # the tests so far, by lab
    taken: Taken | None = None
    error: str = ""  # in English ("" while all is well); `error_zh` in Chinese
    error_zh: str = ""
    seconds: float = 0.0
    cut: bool = False  # the run was stopped before this submission was finished
    seed: int = 0  # the seed of every random input of its checks
    term: TermState = field(default_factory=TermState)  # roster, lateness, regrade

    def fail(self, why: Text) -> None:
        """Record why the submission is an error row (the first reason is kept)."""
        if not self.error:
            self.error, self.error_zh = why.en, why.zh


def _worker_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _ENV_KEEP or k.startswith("LC_")}
    for key in ("MINILLM_SANDBOX", "MINILLM_LANG"):
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return env


class Supervisor:
    """Grades the submissions of one batch, one worker process each (the state shared by the
    batch's threads)."""

    def __init__(
        self,
        course: Course | PendingCourse,
        run_dir: Path,
        options: GradeOptions,
        source: Path,
        lanes: int = 1,
    ) -> None:
        self.source = source.resolve()
        self.lanes = lanes  # phases each worker runs at once (`grader.grade.lanes`)
        # a copy still compiling: its checks load once its files are written, its first
        # worker waits for the compiling (`_work`)
        self.pending = course if isinstance(course, PendingCourse) else None
        self.course = course.copied() if isinstance(course, PendingCourse) else course
        self.run_dir = run_dir
        self.options = options
        self.labs: dict[str, Lab] = {
            lab_id: load_graded_lab(self.course.info(lab_id), solutions=self.course.private)
            for lab_id in options.labs
        }
        self.checks = check_hashes(self.course)  # lab id → the hash of its checks (regrades)
        self.events: queue.Queue[int] = queue.Queue()
        self.lock = threading.Lock()
        self.procs: dict[int, subprocess.Popen[bytes]] = {}  # running workers, by index
        self.stopped = ""  # why the run was stopped ("" while it goes on)

    def stop(self, reason: str) -> None:
        """Start no more workers and kill the running ones with everything under them."""
        with self.lock:
            self.stopped = self.stopped or reason
            procs = list(self.procs.values())
        for proc in procs:
            if proc.poll() is None:
                kill_tree(proc.pid)

    def halted(self) -> bool:
        """Whether the run was stopped (a call: the answer changes under other threads)."""
        return bool(self.stopped)

    def _stop(self, state: SubmissionState) -> None:
        """Mark `state` cut short by the stop, which replaces any earlier reason."""
        why = tr(
            f"评分被中止（{self.stopped}），这份提交没有评完",
            f"grading was stopped ({self.stopped}) before this submission was finished",
        )
        state.cut, state.error, state.error_zh = True, why.en, why.zh

    # -- one submission, in a pool thread -------------------------------------------------
    def grade(self, index: int, path: Path, state: SubmissionState) -> None:
        state.started = time.monotonic()
        self.events.put(index)
        try:
            if self.stopped:
                self._stop(state)
            else:
                self._grade(index, path, state)
        except Exception as e:  # never let one submission stop the batch
            why = f"{type(e).__name__}: {e}"
            state.fail(tr(f"评分时的内部错误：{why}", f"internal error while grading: {why}"))
        state.seconds = time.monotonic() - state.started
        state.done = True
        self.events.put(index)

    def _grade(self, index: int, path: Path, state: SubmissionState) -> None:
        opts = self.options
        due = opts.late.cutoff(opts.due) if opts.due is not None else None
        try:
            deadline = state.started + opts.seconds
            latest = opts.late.kind == "penalty"
            taken = read_submission(path, opts.labs, deadline=deadline, due=due, latest=latest)
        except SubmissionError as e:
            state.fail(e.text)
            return
        state.taken = taken
        if opts.due is not None:
            student = state.term.student
            at = student.submitted_at if student is not None else None
            late = state.term.lateness = judge(taken, at, opts.due, opts.late)
            if late.nothing is not None:
                state.term.missing = True
                state.fail(late.nothing)
                return
        work = self.run_dir / "subs" / f"{index:05d}"
        for lab_id, text in taken.files.items():
            target = work / student_path(lab_id)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        for folder in (work.parent, work, work / "labs"):  # traversed, never listed, by the
            if folder.is_dir():  # uid level's children (each is handed its own lab folder)
                folder.chmod(0o711)
        labs = tuple(lab for lab in self.options.labs if lab in taken.files)
        if not labs:
            state.fail(_nothing_taken(self.options.labs, taken))
            return
        row = opts.previous.rows.get(state.name) if opts.previous is not None else None
        if row is not None and row.seed is not None and opts.seed is None:
            state.seed = row.seed  # a regrade draws the inputs the previous run drew
        reused, labs = plan(state.term, taken, self.labs, self.checks, row, opts.only, own_fields)
        with self.lock:
            state.results.update(reused)
        if not labs:
            return  # every lab is the previous result's: no worker
        work.mkdir(parents=True, exist_ok=True)
        hide = (self.source, *self.options.hide)
        job = GradeJob(
            self.course.root, self.course.private, work, labs, state.seed, hide, self.lanes
        )
        job_file = self.run_dir / "subs" / f"{index:05d}.job.json"
        job_file.write_text(job.dumps(), encoding="utf-8")
        job_file.chmod(0o600)
        self._work(index, job, state)

    def _work(self, index: int, job: GradeJob, state: SubmissionState) -> None:
        job_file = self.run_dir / "subs" / f"{index:05d}.job.json"
        err_path = self.run_dir / "subs" / f"{index:05d}.stderr"
        env = _worker_env()
        scratch = self.run_dir / "tmp" / f"{index:05d}"  # removed with the run, even when
        scratch.mkdir(parents=True)  # the worker is killed before it cleans up after itself
        for folder in (scratch.parent, scratch):  # each sandbox's own folder is its uid's
            folder.chmod(0o711)
        env["TMPDIR"] = str(scratch)
        if self.pending is not None:
            self.pending.wait()  # no worker runs on a copy still being compiled
        err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(err_fd, "wb") as err, self.lock:  # `stop` sees every worker started
            if self.stopped:
                self._stop(state)
                return
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-E",
                    "-B",
                    "-m",
                    "grader.grade.worker",
                    str(job_file),
                    self.options.isolation,
                ],
                cwd=self.course.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
            self.procs[index] = proc
        try:
            finished = self._read(index, proc, state)
        finally:
            if proc.poll() is None:
                kill_tree(proc.pid)
            proc.wait()
            with self.lock:
                del self.procs[index]
            if proc.stdout is not None:
                proc.stdout.close()
        if not finished and self.halted():
            self._stop(state)
        elif not finished and not state.error:
            tail = err_path.read_text(encoding="utf-8", errors="replace").strip()
            last = tail.splitlines()[-1] if tail else ""
            code = proc.returncode
            zh_tail, en_tail = (f"：{last}", f": {last}") if last else ("", "")
            state.fail(
                tr(
                    f"这份提交的评分进程意外结束（退出码 {code}）{zh_tail}",
                    f"the grader's worker for this submission ended unexpectedly "
                    f"(exit status {code}){en_tail}",
                )
            )

    def _read(self, index: int, proc: subprocess.Popen[bytes], state: SubmissionState) -> bool:
        """Read the worker's report lines until it is done; whether it said "done"."""
        assert proc.stdout is not None
        budget = self.options.seconds
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        buffer = b""
        try:
            while True:
                elapsed = time.monotonic() - state.started
                used = tree_cpu_seconds(proc.pid) if elapsed >= budget else None
                if over_budget(elapsed, used, budget):
                    limit = f"{self.options.seconds:g}"
                    state.fail(
                        tr(
                            f"这份提交评了超过 {limit} 秒，被停下",
                            f"grading this submission took more than {limit} s and was stopped",
                        )
                    )
                    return False
                if not sel.select(timeout=max(0.05, min(budget - elapsed, 1.0))):
                    continue
                chunk = os.read(proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    return False
                buffer += chunk
                if len(buffer) > MAX_LINE:
                    state.fail(
                        tr(
                            "评分进程发来的一行报告太长",
                            "the grader's worker sent a report line that is too long",
                        )
                    )
                    return False
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    verdict = self._line(index, line, state)
                    if verdict is not None:
                        return verdict
        finally:
            sel.close()

    def _line(self, index: int, line: bytes, state: SubmissionState) -> bool | None:
        """Take one report line; True when the worker is done, False on a broken line."""
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise WireError("not an object")
            if msg.get("done") is True:
                return True
            if "error" in msg:
                why = str(msg["error"])[:2000]
                state.fail(tr(f"评分进程出错：{why}", f"the grader's worker failed: {why}"))
                return False
            if "lab" in msg:
                result = lab_from_wire(msg.get("result"))
                if result.lab not in self.labs or result.lab != msg["lab"]:
                    raise WireError(f"a result for {str(msg['lab'])[:40]!r}")
                partial = msg.get("partial") is True
                own_fields(result, self.labs[result.lab], partial)
                with self.lock:
                    if partial:
                        state.partial[result.lab] = result
                    else:
                        state.results[result.lab] = result
                        state.partial.pop(result.lab, None)
                self.events.put(index)
        except (ValueError, WireError) as e:
            state.fail(
                tr(
                    f"评分进程发来的报告格式不对（{e}）",
                    f"the grader's worker sent a malformed report line ({e})",
                )
            )
            return False
        return None

    # -- the batch, in the calling thread ------------------------------------------------
    def submission(self, state: SubmissionState) -> SubmissionResult:
        """The state as a result: every lab, finished or not (then ERROR, 0 points)."""
        taken = state.taken
        labs: list[LabResult] = []
        for lab_id, lab in self.labs.items():
            with self.lock:
                got, part = state.results.get(lab_id), state.partial.get(lab_id)
            if got is not None:
                got = shown(state.term, got, self.options.only[1])
                got.seed = state.seed
                labs.append(got)
                continue
            rest = unfinished_lab(lab, self._why(lab_id, state), student_path(lab_id))
            if part is not None:  # the tests that finished keep their verdicts
                rest.tests[: len(part.tests)] = part.tests
            labs.append(rest)
        result = SubmissionResult(
            state.name,
            state.source,
            labs,
            state.error if state.done else (state.error or "grading not finished"),
            state.seconds,
            done=state.done,
            cut=state.cut,
            seed=state.seed,
            error_zh=state.error_zh if state.done else (state.error_zh or "还没有评完"),
        )
        if taken is not None:
            result.commit = taken.commit
            result.dirty = [lab for lab in taken.dirty if lab in self.labs]
            if taken.note is not None:
                result.note, result.note_zh = taken.note.en, taken.note.zh
            elif result.dirty:
                where = ", ".join(student_path(lab) for lab in result.dirty)
                result.note = (
                    f"the working tree differs from the commit in {where}: the commit was graded"
                )
                result.note_zh = f"工作区的 {where} 和提交不一样：评的是提交里的版本"
            result.files = {lab: student_path(lab) for lab in self.labs}
            result.functions = dict(taken.functions)
        apply(result, state.term)
        return result

    def _why(self, lab_id: str, state: SubmissionState) -> Text:
        taken = state.taken
        if taken is not None and lab_id in taken.problems:
            problem = taken.problems[lab_id]
            return tr(f"没有采用：{problem.zh}", f"not taken: {problem.en}")
        if taken is not None and lab_id not in taken.files:
            where = student_path(lab_id)
            return tr(f"提交里没有 {where}", f"the submission has no {where}")
        if not state.done:
            return tr("还没有评完", "not graded yet")
        return tr(f"没有评完：{state.error_zh or state.error}", f"not graded: {state.error}")


def over_budget(elapsed: float, used: float | None, budget: float) -> bool:
    """Whether a submission has had its time: `budget` seconds of CPU time of its own tree
    (`used`, where it can be measured), so that a busy neighbour on the same machine
    cannot cost it points, but never more than `WALL_FACTOR` times `budget` of wall time;
    `budget` seconds of wall time where its CPU time is unknown (`used` None)."""
    if elapsed < budget:
        return False
    if used is None or elapsed >= budget * WALL_FACTOR:
        return True
    return used >= budget


def unfinished_lab(lab: Lab, reason: Text, impl: str = "") -> LabResult:
    """A lab that did not run for a submission: every test ERROR with `reason`, 0 points."""
    tests = [
        TestResult(
            spec.id,
            n,
            spec.title,
            Status.ERROR,
            [],
            reason,
            points=spec.points,
            hidden=spec.hidden,
        )
        for n, spec in enumerate(lab.tests, 1)
    ]
    return LabResult(lab.id, lab.title, impl, 0.0, tests)


def _nothing_taken(lab_ids: Sequence[str], taken: Taken) -> Text:
    """Why a submission with none of the graded files is an error row, not a row of zeros."""
    if taken.problems:
        lab_id, why = next(iter(taken.problems.items()))
        where = student_path(lab_id)
        return tr(
            f"这份提交的文件一个也没有采用（{where}：{why.zh}）",
            f"no file of this submission could be taken ({where}: {why.en})",
        )
    wanted = [student_path(lab_id) for lab_id in lab_ids]
    shown = ", ".join(wanted[:3]) + (f" … ({len(wanted)} files)" if len(wanted) > 3 else "")
    return tr(
        f"这份提交里没有任何要评的文件：{shown}",
        f"the submission holds none of the files graded here: {shown}",
    )


def own_fields(result: LabResult, lab: Lab, partial: bool = False) -> None:
    """Take each test's number, points and visibility from this process's own `Lab`, not
    from the worker's report; the tests must be the lab's, in its order (for a partial
    result, the first of them and not all).

    Raises:
        WireError: the reported tests are not the lab's tests.
    """
    ids, want = [t.id for t in result.tests], [s.id for s in lab.tests]
    if ids != want[: len(ids)] or (len(ids) < len(want)) != partial:
        raise WireError(f"the tests reported for {lab.id} are not its tests")
    for n, (test, spec) in enumerate(zip(result.tests, lab.tests[: len(ids)], strict=True), 1):
        test.number, test.points, test.hidden, test.title = n, spec.points, spec.hidden, spec.title
    result.title = lab.title
    result.impl = student_path(lab.id)
