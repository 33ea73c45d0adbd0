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
"""

from __future__ import annotations

import compileall
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.labs import LabInfo

__all__ = ["RUN_PACKAGES", "Course", "copy_course"]

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
    """Copy the course at `source` into `run_dir` (see the module docstring)."""
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
    _compile(root)
    _readable(root)
    return Course(root, private, tuple(lab_ids))


def _compile(root: Path) -> None:
    """Compile what a graded run imports (`RUN_PACKAGES`), in this process: a pool of
    processes costs more CPU than it saves."""
    for module in sorted((root / "grader").glob("*.py")):
        compileall.compile_file(module, quiet=2)
    for package in RUN_PACKAGES:
        if (root / package).is_dir():
            compileall.compile_dir(root / package, quiet=2)


def _readable(root: Path) -> None:
    """Every folder and file of the copy readable by anyone (the uid level's children run
    as another user), whatever the modes of the instructor's files were."""
    for here, _, files in os.walk(root):
        os.chmod(here, 0o755)
        for name in files:
            os.chmod(os.path.join(here, name), 0o644)
