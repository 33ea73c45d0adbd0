"""The checks a grade runs: a lab's public tests from `verify.py`, plus its hidden ones.

Hidden checks live in ``solutions/labNN/hidden.py``, a module with one function::

    def register(lab: Lab) -> None:
        @lab.test("...", "...", hidden=True, requires=["mask_adds"])
        def mask_no_broadcast(t: TestContext) -> None:
            ...

that adds `@lab.test(..., hidden=True)` tests to the lab's `Lab` (after the public ones;
`requires` names public tests by id). Only `minillm grade` and `minillm self-check` load
them; the student edition (`minillm pack`) has no `solutions/` at all, so `verify`, the
pytest plugin and a student's own tools never see them. A test that a hidden module adds
without ``hidden=True`` is an error, so a check cannot leak into the public report by a
forgotten flag.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from grader.dsl import Lab
from grader.labs import LabInfo, load_lab

__all__ = ["HiddenChecksError", "hidden_path", "load_graded_lab", "load_hidden"]


class HiddenChecksError(ImportError):
    """A hidden-checks module that cannot be used (the message names the file)."""


def hidden_path(info: LabInfo, solutions: Path | None = None) -> Path:
    """``solutions/<lab>/hidden.py`` of the lab's course (or of the folder `solutions`)."""
    base = solutions if solutions is not None else info.solution.parent.parent
    return base / info.id / "hidden.py"


def load_hidden(lab: Lab, path: Path) -> int:
    """Run the hidden module at `path` against `lab`; returns how many tests it added.

    Raises:
        HiddenChecksError: the module does not import, has no ``register(lab)``, or adds
            a test that is not ``hidden=True``.
    """
    before = len(lab.tests)
    spec = importlib.util.spec_from_file_location(f"minillm_hidden_{lab.id}", path)
    if spec is None or spec.loader is None:
        raise HiddenChecksError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        register = getattr(module, "register", None)
        if not callable(register):
            raise HiddenChecksError(f"{path}: must define register(lab) that adds the tests")
        register(lab)
    except HiddenChecksError:
        raise
    except Exception as e:
        raise HiddenChecksError(f"{path}: {type(e).__name__}: {e}") from e
    added = lab.tests[before:]
    public = [s.id for s in added if not s.hidden]
    if public:
        del lab.tests[before:]
        raise HiddenChecksError(
            f"{path}: adds {', '.join(public)} without hidden=True (every test of a hidden "
            "module must be hidden)"
        )
    return len(added)


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
