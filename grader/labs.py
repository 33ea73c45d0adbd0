"""Where the course lives on disk, and how a lab name on the command line finds its folder."""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError
from grader.spec import Lab

__all__ = [
    "LabInfo",
    "UnknownLab",
    "all_labs",
    "course_root",
    "instructor_only",
    "load_lab",
    "resolve_lab",
]

_LAB_DIR = re.compile(r"^lab(\d\d)$")


class UnknownLab(GraderError, LookupError):
    """A lab name that matches no folder under labs/."""


def course_root() -> Path:
    """`MINILLM_ROOT` if set, else the folder that holds `grader/`."""
    env = os.environ.get("MINILLM_ROOT")
    return Path(env).resolve() if env else Path(__file__).resolve().parent.parent


def instructor_only(command: str) -> str | None:
    """Why `command` cannot run in this copy of the course (None when it can): it needs the
    reference solutions and hidden checks, which the student edition leaves out."""
    root = course_root()
    if (root / "solutions").is_dir():
        return None
    return (
        f"{command} needs the instructor's course (its solutions/ folder), and {root} has "
        "none: this is the student edition (minillm pack). Run it in the course repository."
    )


@dataclass(frozen=True)
class LabInfo:
    """A lab folder: its id (``lab04``), folder, verify file, stub and reference solution."""

    id: str
    dir: Path

    @property
    def verify(self) -> Path:
        return self.dir / "verify.py"

    @property
    def student(self) -> Path:
        return self.dir / "student.py"

    @property
    def solution(self) -> Path:
        return self.dir.parent.parent / "solutions" / self.id / "student.py"


def all_labs(root: Path | None = None) -> list[LabInfo]:
    """Every labs/labNN folder that has a verify.py, in order."""
    base = (root or course_root()) / "labs"
    if not base.is_dir():
        return []
    found = [d for d in base.iterdir() if _LAB_DIR.match(d.name) and (d / "verify.py").is_file()]
    return [LabInfo(d.name, d) for d in sorted(found)]


def resolve_lab(name: str, root: Path | None = None) -> LabInfo:
    """Find a lab by ``lab04``, ``04``, ``4`` or a path to its folder.

    Raises:
        UnknownLab: with the list of labs in the message.
    """
    labs = all_labs(root)
    key = name.strip().rstrip("/")
    path = Path(key)
    if path.is_dir() and (path / "verify.py").is_file():
        return LabInfo(path.resolve().name, path.resolve())
    m = re.fullmatch(r"(?:lab)?0*(\d{1,2})", os.path.basename(key), flags=re.IGNORECASE)
    if m:
        wanted = f"lab{int(m.group(1)):02d}"
        for lab in labs:
            if lab.id == wanted:
                return lab
    names = ", ".join(lab.id for lab in labs) or "(none found)"
    raise UnknownLab(f"unknown lab {name!r}; available labs: {names}")


def load_lab(info: LabInfo) -> Lab:
    """Import the lab's verify.py (in the grader's process) and return its `Lab`."""
    spec = importlib.util.spec_from_file_location(f"minillm_verify_{info.id}", info.verify)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {info.verify}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    labs = [v for v in vars(module).values() if isinstance(v, Lab)]
    if len(labs) != 1:
        raise ImportError(f"{info.verify} must define exactly one Lab, found {len(labs)}")
    labs[0].folder = info.dir
    return labs[0]
