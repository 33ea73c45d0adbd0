"""The pristine course one grading run stands on, copied once at its start.

    <run>/course/     framework/, grader/ and labs/<id>/ without any student.py: what the
                      graded code may import and what verify.py reads; compiled here once
                      (nothing is written into it later)
    <run>/private/    <id>/hidden.py: the hidden checks, read by the grader's side only
                      (mode 0700: the uid level's children cannot read it either)
    <run>/subs/NNNN/  one folder per submission: labs/<id>/student.py and nothing else

The copy is taken from the instructor's course before any submission runs, so nothing a
submission does (to its own files or, without isolation, to the course tree) changes what
later submissions are graded against, and the isolation backend can mount ``course/``
read-only and leave ``private/`` and the other submissions out. Caches are never copied:
a planted ``.pyc`` stamped with its source's time would otherwise run in every worker.

The copy holds what a graded run reads: the framework, grader/'s own modules and the
packages a run imports (`RUN_PACKAGES`: not the commands, class reports and course tools),
and each lab's folder without its handouts (``*.md``), Makefile and stub. Writing its files
and compiling them take most of a one-submission run's start, so neither waits for the
grader: `start_copy` writes the files in a thread while the grader loads, then starts a
process of its own that compiles them; `PendingCourse.copied` hands the files over once they
are written (the labs' checks compiled first, by whoever loads them) and
`PendingCourse.wait` once everything is compiled; no worker starts before that.
`copy_course` does it all at once.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.labs import LabInfo

__all__ = ["RUN_PACKAGES", "Course", "PendingCourse", "RunFolder", "copy_course", "start_copy"]

_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", "student.py", "*.bak")
_LAB_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", "student.py", "*.bak",
                                   "*.md", "Makefile", ".stub.py")  # fmt: skip
# What a graded run imports from the copy (the worker, its sandboxes, the student's code and
# the labs' checks): the framework, grader/'s own modules, these packages and the labs (of
# the reports' package, a lab's report: every worker loads it before it runs student code,
# `grader.sandbox.guard.preload`). The rest of grader/ (commands, class reports, course
# tools: a third of its files) is never imported there, so it is neither copied nor
# compiled. The labs come last: the grader compiles their checks itself, first, as it loads
# them (`PendingCourse.copied`), and the compiler meets them last.
RUN_PACKAGES = ("framework", "grader/codec", "grader/diagnose", "grader/grade",
                "grader/render", "grader/sandbox", "labs")  # fmt: skip
_RUN_REPORTS = ("__init__.py", "lab.py", "term.py")  # of grader/render, what a worker imports


@dataclass(frozen=True)
class Course:
    """A pristine course copy: `root` (course/), `private` (hidden checks) and its labs."""

    root: Path
    private: Path
    labs: tuple[str, ...]

    def info(self, lab_id: str) -> LabInfo:
        """The copy's lab folder (its verify.py is the one the run grades with)."""
        return LabInfo(lab_id, self.root / "labs" / lab_id)


def copy_course(source: Path, run_dir: Path, lab_ids: Sequence[str]) -> Course:
    """Copy the course at `source` into `run_dir` and compile it (see the module docstring)."""
    return start_copy(source, run_dir, lab_ids, background=False).wait()


def start_copy(
    source: Path, run_dir: Path, lab_ids: Sequence[str], *, background: bool = True
) -> PendingCourse:
    """Copy the course's files into `run_dir`, in a thread (`background`, then compiled by a
    process of its own that the thread starts) or now (then compiled at `PendingCourse.wait`).
    """
    root = run_dir / "course"
    private = run_dir / "private"
    root.mkdir(parents=True)
    private.mkdir(mode=0o700)  # the grader's only: the uid level's children must not read it
    return PendingCourse(Course(root, private, tuple(lab_ids)), source, background)


def _copy_files(source: Path, course: Course) -> None:
    """The files of the copy (see the module docstring), and each lab's hidden checks."""
    root, private = course.root, course.private
    shutil.copytree(source / "framework", root / "framework", ignore=_SKIP, symlinks=False)
    (root / "grader").mkdir()
    for path in sorted((source / "grader").glob("*.py")):
        shutil.copyfile(path, root / "grader" / path.name)
    for package in RUN_PACKAGES:
        if package == "grader/render":  # a lab's report, not the class reports
            (root / package).mkdir()
            for name in _RUN_REPORTS:
                shutil.copyfile(source / package / name, root / package / name)
        elif package.startswith("grader/"):
            shutil.copytree(source / package, root / package, ignore=_SKIP, symlinks=False)
    for lab_id in course.labs:
        shutil.copytree(source / "labs" / lab_id, root / "labs" / lab_id, ignore=_LAB_SKIP)
        hidden = source / "solutions" / lab_id / "hidden.py"
        if hidden.is_file():
            (private / lab_id).mkdir()
            shutil.copyfile(hidden, private / lab_id / "hidden.py")


class PendingCourse:
    """A course copy being written (`copied`: what reads its files may read them then)
    and compiled (`wait`)."""

    def __init__(self, files: Course, source: Path, background: bool) -> None:
        self.files = files
        self.sources: list[str] = []  # what is compiled, in order (`_sources`), once copied
        self._compiler: subprocess.Popen[bytes] | None = None
        self._problem: BaseException | None = None
        self._ready = self._labs_compiled = False
        self._lock = threading.Lock()  # the batch's threads may all wait at once
        self._writer: threading.Thread | None = None
        if background:
            self._writer = threading.Thread(
                target=self._write, args=(source, True), name="course-copy", daemon=True
            )
            self._writer.start()
        else:
            self._write(source, False)
            if self._problem is not None:
                raise self._problem

    def _write(self, source: Path, start_compiler: bool) -> None:
        try:
            _copy_files(source, self.files)
            self.sources = _sources(self.files.root)
            if start_compiler:
                self._compiler = _start_compiler(self.files.root, self.sources)
        except BaseException as e:  # raised again where the copy is asked for
            self._problem = e

    def copied(self) -> Course:
        """The copy once its files are written, its labs' checks compiled (the grader loads
        them next); the compiler may still be compiling the rest.

        Raises:
            OSError: the course could not be copied (what copying raised).
        """
        if self._writer is not None:
            self._writer.join()
        if self._problem is not None:
            raise self._problem
        with self._lock:
            if not self._labs_compiled:
                _compile(self.files.root, [s for s in self.sources if s.startswith("labs/")])
                self._labs_compiled = True
        return self.files

    def wait(self) -> Course:
        """The copy, compiled and readable by every user.

        This process compiles what the compiler has not reached yet, from the other end,
        then waits for it; what a compiler that failed or could not start left undone is
        compiled here after it. The copy is the same either way: each module is compiled
        from its own source and written whole (`compileall`).

        Raises:
            OSError: the course could not be copied (what copying raised).
        """
        self.copied()
        with self._lock:
            if not self._ready:
                _compile(self.files.root, self.sources)
                if self._compiler is not None and self._compiler.wait() != 0:
                    _compile(self.files.root, self.sources)
                _readable(self.files.root)
                self._ready = True
        return self.files

    def cancel(self) -> None:
        """Let the copy's thread finish and stop the compiler if it still runs (the run
        ends before it needed the copy)."""
        if self._writer is not None:
            self._writer.join()
        if self._compiler is not None and self._compiler.poll() is None:
            self._compiler.kill()
            self._compiler.wait()


def _sources(root: Path) -> list[str]:
    """What a graded run imports (`RUN_PACKAGES`): grader/'s own modules and those
    packages' modules, relative to `root`, in a fixed order."""
    modules = sorted((root / "grader").glob("*.py"))
    for package in RUN_PACKAGES:
        modules += sorted((root / package).rglob("*.py"))
    return [str(m.relative_to(root)) for m in modules]


def _start_compiler(root: Path, sources: list[str]) -> subprocess.Popen[bytes] | None:
    """``python -I -S -m compileall`` over `sources` (`_sources`), in their order; None if
    it cannot start."""
    cmd = [sys.executable, "-I", "-S", "-m", "compileall", "-q", "-q", *sources]
    try:
        return subprocess.Popen(
            cmd,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def _compile(root: Path, sources: list[str]) -> None:
    """Compile `sources` in this process, last first, skipping what is compiled already:
    beside a compiler that works from the first, each does half of what is left."""
    for source in reversed(sources):
        compileall.compile_file(root / source, quiet=2)


def _readable(root: Path) -> None:
    """Every folder and file of the copy readable by anyone (the uid level's children run
    as another user), whatever the modes of the instructor's files were."""
    for here, _, files in os.walk(root):
        os.chmod(here, 0o755)
        for name in files:
            os.chmod(os.path.join(here, name), 0o644)


class RunFolder:
    """A grading run's scratch folder (``minillm-grade-*``), the course copy compiling in it.

    `grader.grade.batch.grade_batch` makes its own; ``minillm grade`` makes it as soon as
    it knows the labs, so that the copy compiles while the rest of the grader loads, and
    passes it on. `close` (or the end of a ``with``) stops the compiler if it still runs
    and removes the folder.
    """

    def __init__(
        self, source: Path, labs: Sequence[str], isolation: str, work_dir: Path | None = None
    ) -> None:
        if isolation == "uid":  # the sandboxes' users must reach their own folders
            work_dir = _traversable(work_dir or Path(tempfile.gettempdir()))
        self.source, self.labs, self.isolation = source, tuple(labs), isolation
        self.path = Path(tempfile.mkdtemp(prefix="minillm-grade-", dir=work_dir))
        try:
            self.path.chmod(0o711)  # only what a sandbox is handed is readable in it
            self.course = start_copy(source, self.path, self.labs)
        except BaseException:
            shutil.rmtree(self.path, ignore_errors=True)
            raise

    def close(self) -> None:
        self.course.cancel()
        shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> RunFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _traversable(folder: Path) -> Path:
    """`folder` if every user may pass through it and the folders above it, else the
    system's ``/tmp`` (a private TMPDIR would lock the uid level's sandboxes out)."""
    here = folder.resolve()
    for part in (here, *here.parents):
        try:
            if not os.stat(part).st_mode & 0o001:
                return Path("/tmp")
        except OSError:
            return Path("/tmp")
    return here
