"""The commands the grader tells a student to type, spelled so that they run where the
student is.

A student starts in a lab's folder (``cd labs/lab04 && make test``), where ``minillm``
is usually not on the PATH: it lives in the course's ``.venv``. So a printed command is
the ``make`` form in a lab's folder or at the course root (both Makefiles have ``test``
and ``hint``), and elsewhere ``minillm`` as this process was started: ``minillm`` when
the PATH finds this very script (an activated venv), else its path from the current
folder (``../../.venv/bin/minillm``), or ``python -m grader`` likewise. Windows has no
``make``: there it is always the ``minillm`` form.

    hint_command("lab04", 7, 3)   # in labs/lab04: "make hint T=7 L=3"

It does not run anything, and does not know about a shell's aliases.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from grader.labs import course_root

__all__ = ["hint_command", "minillm_command", "verify_command"]


def _short(path: Path) -> str:
    """`path` from the current folder when that is shorter, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    if rel.count(os.pardir) > 3:
        return str(path)
    return rel if os.sep in rel else f".{os.sep}{rel}"


def _same(found: str | None, path: Path) -> bool:
    try:
        return found is not None and os.path.samefile(found, path)
    except OSError:
        return False


def minillm_command() -> str:
    """How to start `minillm` again from the current folder (see the module docstring)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.stem == "minillm" and argv0.exists():
        return "minillm" if _same(shutil.which("minillm"), argv0) else _short(argv0.resolve())
    script = Path(sys.executable).parent / ("minillm.exe" if os.name == "nt" else "minillm")
    if _same(shutil.which("minillm"), script):
        return "minillm"
    if script.is_file():
        return _short(script)
    python = "python" if _same(shutil.which("python"), Path(sys.executable)) else None
    return f"{python or _short(Path(sys.executable))} -m grader"


def _where() -> str:
    """``"lab:<id>"`` in a lab's folder, ``"root"`` at the course root, else ``""``."""
    if os.name == "nt":
        return ""  # no make
    try:
        here = Path.cwd().resolve()
    except OSError:
        return ""
    root = course_root()
    if here == root:
        return "root"
    if here.parent == root / "labs" and (here / "Makefile").is_file():
        return f"lab:{here.name}"
    return ""


def hint_command(lab: str, test: int | str | None = None, level: int | None = None) -> str:
    """The command that shows `level` hints of `test` of `lab` (all of them without `level`).

    Example: ``make hint T=7 L=3`` in ``labs/lab04``, ``make hint LAB=lab04 T=7 L=3`` at
    the root, ``minillm hint lab04 7 --level 3`` elsewhere.
    """
    where = _where()
    if where in (f"lab:{lab}", "root"):
        words = ["make hint"] + ([f"LAB={lab}"] if where == "root" else [])
        words += [f"T={test}"] if test is not None else []
        words += [f"L={level}"] if level is not None else []
        return " ".join(words)
    words = [minillm_command(), "hint", lab]
    words += [str(test)] if test is not None else []
    words += ["--level", str(level if level is not None else 9)]
    return " ".join(words)


def verify_command(lab: str) -> str:
    """The command that verifies `lab`'s student.py from here (``make test`` in its folder)."""
    where = _where()
    if where == f"lab:{lab}":
        return "make test"
    if where == "root":
        return f"make test LAB={lab}"
    if where.startswith("lab:"):
        return f"cd ../{lab} && make test"
    if os.name != "nt":
        lab_dir = course_root() / "labs" / lab
        rel = os.path.relpath(lab_dir) if lab_dir.is_dir() else f"labs/{lab}"
        if rel.count(os.pardir) <= 3:
            return f"cd {rel} && make test"
    return f"{minillm_command()} verify {lab}"
