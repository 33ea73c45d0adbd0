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

Compiling takes most of the copy's time (a fifth of a second for the whole course), so
`start_copy` copies the files and leaves the compiling to a process of its own while the
grader loads its checks; `PendingCourse.wait` hands the copy over once it is compiled, and
no worker starts before that. `copy_course` does both at once.
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
# What a graded run imports from the copy (the worker, its sandboxes, the student's code and
# the labs' checks): the framework, the labs, grader/'s own modules and these packages. The
# rest of grader/ (commands, reports, course tools: 40% of its files) is never imported there,
# so it is not compiled: two thirds of the compiling, on the way to the first lab.
RUN_PACKAGES = ("framework", "labs", "grader/codec", "grader/diagnose", "grader/grade",
                "grader/sandbox")  # fmt: skip


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
    """Copy the course's files into `run_dir` now; compile them in a process of its own
    (`background`) or at `PendingCourse.wait`."""
    root = run_dir / "course"
    private = run_dir / "private"
    root.mkdir(parents=True)
    private.mkdir(mode=0o700)  # the grader's only: the uid level's children must not read it
    for package in ("framework", "grader"):
        shutil.copytree(source / package, root / package, ignore=_SKIP, symlinks=False)
    for lab_id in lab_ids:
        shutil.copytree(source / "labs" / lab_id, root / "labs" / lab_id, ignore=_SKIP)
        hidden = source / "solutions" / lab_id / "hidden.py"
        if hidden.is_file():
            (private / lab_id).mkdir()
            shutil.copyfile(hidden, private / lab_id / "hidden.py")
    mk = source / "labs" / "lab.mk"
    if mk.is_file():
        shutil.copyfile(mk, root / "labs" / "lab.mk")
    course, sources = Course(root, private, tuple(lab_ids)), _sources(root)
    return PendingCourse(course, sources, _start_compiler(root, sources) if background else None)


class PendingCourse:
    """A course copy whose files are in place (`files`: what reads them may read them now)
    and whose compiling may still be running (`wait`)."""

    def __init__(
        self, files: Course, sources: list[str], compiler: subprocess.Popen[bytes] | None
    ) -> None:
        self.files, self.sources, self._compiler, self._ready = files, sources, compiler, False
        self._lock = threading.Lock()  # the batch's threads may all wait at once

    def wait(self) -> Course:
        """The copy, compiled and readable by every user.

        This process compiles what the compiler has not reached yet, from the other end,
        then waits for it; what a compiler that failed or could not start left undone is
        compiled here after it. The copy is the same either way: each module is compiled
        from its own source and written whole (`compileall`)."""
        with self._lock:
            if not self._ready:
                _compile(self.files.root, self.sources)
                if self._compiler is not None and self._compiler.wait() != 0:
                    _compile(self.files.root, self.sources)
                _readable(self.files.root)
                self._ready = True
        return self.files

    def cancel(self) -> None:
        """Stop the compiler if it still runs (the run ends before it needed the copy)."""
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
