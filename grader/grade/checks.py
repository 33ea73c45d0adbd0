"""The checks a grade runs: a lab's public tests from `verify.py`, plus its hidden ones.

Hidden checks live in ``solutions/labNN/hidden.py``, a module with one function::

    def register(lab: Lab) -> None:
        @lab.test("...", "...", hidden=True, requires=["<a public test's id>"])
        def <the hidden test's id>(t: TestContext) -> None:
            ...

that adds `@lab.test(..., hidden=True)` tests to the lab's `Lab` (after the public ones;
`requires` names public tests by id). Only `minillm grade`, `minillm self-check` and
`minillm gradescope-bundle` load them; the student edition (`minillm pack`) has no
`solutions/` at all, so `verify`, the pytest plugin and a student's own tools never see
them. A test that a hidden module adds without ``hidden=True`` is an error, so a check cannot
leak into the public report by a forgotten flag.

A module that cannot be used is a `HiddenChecksError` whose message is one problem line,
``file:line: what``, the line being the module's own (the import that fails, the decorator
whose ``requires`` names an unknown test), never a traceback; `check_hidden` gives those
lines for the labs a command is about to use, before it uses them.
"""

from __future__ import annotations

import importlib.util
import traceback
from collections.abc import Iterable
from pathlib import Path

from grader.errors import GraderError
from grader.labs import LabInfo, load_lab
from grader.spec import Lab

__all__ = [
    "HiddenChecksError",
    "check_hidden",
    "hidden_path",
    "hidden_problems",
    "load_graded_lab",
    "load_hidden",
]


class HiddenChecksError(GraderError, ImportError):
    """A hidden-checks module that cannot be used (the message names the file)."""


def hidden_path(info: LabInfo, solutions: Path | None = None) -> Path:
    """``solutions/<lab>/hidden.py`` of the lab's course (or of the folder `solutions`)."""
    base = solutions if solutions is not None else info.solution.parent.parent
    return base / info.id / "hidden.py"


def _shown(path: Path) -> str:
    """`path` relative to the current folder when it is inside it (shorter messages)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (OSError, ValueError):
        return str(path)


def _line_in(path: Path, error: BaseException) -> int | None:
    """The line of `path` where `error` arose: its innermost frame in that file."""
    if (
        isinstance(error, SyntaxError)
        and error.filename
        and error.lineno
        and Path(error.filename).resolve() == path.resolve()
    ):
        return error.lineno
    here = path.resolve()
    lines = [
        frame.lineno
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.lineno is not None and Path(frame.filename).resolve() == here
    ]
    return lines[-1] if lines else None


def _problem(path: Path, line: int | None, what: str) -> str:
    return f"{_shown(path)}:{line}: {what}" if line else f"{_shown(path)}: {what}"


def load_hidden(lab: Lab, path: Path) -> int:
    """Run the hidden module at `path` against `lab`; returns how many tests it added.

    Raises:
        HiddenChecksError: the module does not import, has no ``register(lab)``, or adds
            a test that is not ``hidden=True`` (or one the lab refuses, such as one whose
            ``requires`` names an unknown test); the message is ``file:line: what``.
    """
    before = len(lab.tests)
    spec = importlib.util.spec_from_file_location(f"minillm_hidden_{lab.id}", path)
    if spec is None or spec.loader is None:
        raise HiddenChecksError(_problem(path, None, "cannot be loaded as a Python module"))
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        register = getattr(module, "register", None)
        if not callable(register):
            raise HiddenChecksError(
                _problem(path, None, "must define register(lab) that adds the tests")
            )
        register(lab)
    except HiddenChecksError:
        del lab.tests[before:]
        raise
    except Exception as e:
        del lab.tests[before:]
        what = e.msg if isinstance(e, SyntaxError) else str(e)
        problem = _problem(path, _line_in(path, e), f"{type(e).__name__}: {what}")
        raise HiddenChecksError(problem) from None
    added = lab.tests[before:]
    public = [s for s in added if not s.hidden]
    if public:
        del lab.tests[before:]
        code = getattr(public[0].fn, "__code__", None)
        line = code.co_firstlineno if code is not None else None
        raise HiddenChecksError(
            _problem(
                path,
                line,
                f"adds {', '.join(s.id for s in public)} without hidden=True (every test of a "
                "hidden module must be hidden)",
            )
        )
    return len(added)


def check_hidden(course_root: Path, lab_ids: Iterable[str]) -> list[str]:
    """The problem lines (``file:line: what``) of the labs' hidden modules in the course at
    `course_root`; [] when every one loads (see `hidden_problems`)."""
    return hidden_problems(LabInfo(i, course_root / "labs" / i) for i in lab_ids)


def hidden_problems(infos: Iterable[LabInfo]) -> list[str]:
    """The problem lines (``file:line: what``) of the labs' hidden modules; [] when every
    one loads (a lab without ``solutions/<lab>/hidden.py`` has none to check).

    Commands that load the hidden checks call this first, print the lines and exit 2,
    rather than fail later with a traceback (or, for a bundle, ship a broken module).
    """
    problems: list[str] = []
    for info in infos:
        path = hidden_path(info)
        if not path.is_file():
            continue
        try:
            lab = load_lab(info)
        except Exception as e:  # the public checks are verify's to report; say so briefly
            where = _problem(info.verify, _line_in(info.verify, e), f"{type(e).__name__}: {e}")
            problems.append(f"{where} (so {_shown(path)} cannot be checked)")
            continue
        try:
            load_hidden(lab, path)
        except HiddenChecksError as e:
            problems.append(str(e))
    return problems


def load_graded_lab(info: LabInfo, *, hidden: bool = True, solutions: Path | None = None) -> Lab:
    """The lab's `Lab` from its verify.py, with the hidden tests added when there are any.

    Args:
        info: the lab.
        hidden: False gives the public tests only (what a student's `verify` runs).
        solutions: the folder that holds ``labNN/hidden.py`` (default: the course's
            ``solutions/``; absent in the student edition, which then has public tests only).
    """
    lab = load_lab(info)
    path = hidden_path(info, solutions)
    if hidden and path.is_file():
        load_hidden(lab, path)
    return lab
