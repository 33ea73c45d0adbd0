"""The student's labs, imported into this process: their modules and which functions exist.

`read_lab_file(info)` reads ``labs/labNN/student.py`` without running it: which functions
it defines and which of them are still the lab's stub (``raise NotImplementedError``).
That is enough to explain a piece that falls back, so a lab that is not done is never
imported. `load_lab_module(info)` imports the file under a name of its own (every lab's
file is called ``student.py``); a file that does not import is reported, not raised.
`is_stub(fn)` tells the same of a function object, by reading its source.

Here the student's code runs in the student's own process, on purpose: this is their
machine and their chat, not grading (grading runs in the sandbox).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
import textwrap
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from grader.labs import LabInfo

__all__ = ["LabFile", "LoadedLab", "is_stub", "load_lab_module", "read_lab_file"]


@dataclass
class LabFile:
    """What a student file defines, read without running it."""

    info: LabInfo
    written: dict[str, bool]  # top-level name -> False while it is still a stub
    error: str = ""  # "SyntaxError: ... (line 12)", or a missing file

    def stubs(self, names: tuple[str, ...]) -> list[str]:
        """Those of `names` that are still stubs."""
        return [n for n in names if self.written.get(n) is False]

    def missing(self, names: tuple[str, ...]) -> list[str]:
        """Those of `names` the file does not define."""
        return [n for n in names if n not in self.written]


def read_lab_file(info: LabInfo) -> LabFile:
    """The names `info.student` binds at top level, and which functions are stubs."""
    try:
        tree = ast.parse(info.student.read_text(encoding="utf-8"), str(info.student))
    except OSError:
        return LabFile(info, {}, f"{info.student} is missing")
    except (SyntaxError, ValueError) as e:
        line = f" (line {e.lineno})" if isinstance(e, SyntaxError) else ""
        return LabFile(info, {}, f"{type(e).__name__}: {getattr(e, 'msg', e)}{line}")
    written: dict[str, bool] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            written[node.name] = not any(_raises_not_implemented(s) for s in node.body)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.Import | ast.ImportFrom):
            for name in _bound(node):
                written[name] = True  # softmax = my_softmax: taken as written
    return LabFile(info, written)


def _bound(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
    return [t.id for t in targets if isinstance(t, ast.Name)]


@dataclass
class LoadedLab:
    """A lab's student module, or why it could not be imported."""

    info: LabInfo
    module: ModuleType | None
    error: str = ""  # "SyntaxError: invalid syntax (line 12)", when module is None

    def function(self, name: str) -> Any:
        """The module's attribute `name` if it is callable, else None."""
        fn = getattr(self.module, name, None) if self.module is not None else None
        return fn if callable(fn) else None


def load_lab_module(info: LabInfo) -> LoadedLab:
    """Import `info.student` afresh (a changed file is read again)."""
    name = f"minillm_mine_{info.id}"
    path = info.student
    if not path.is_file():
        return LoadedLab(info, None, f"{path} is missing")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return LoadedLab(info, None, f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    folder = str(path.parent)
    sys.path.insert(0, folder)  # as in the sandbox: helper files beside student.py import
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        return LoadedLab(info, None, f"SyntaxError: {e.msg} (line {e.lineno})")
    except Exception as e:
        sys.modules.pop(name, None)
        return LoadedLab(info, None, f"{type(e).__name__}: {str(e)[:160]}")
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return LoadedLab(info, module)


def _raises_not_implemented(node: ast.stmt) -> bool:
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def is_stub(fn: Any) -> bool:
    """True when the body of `fn` (not a nested block) is still ``raise NotImplementedError``.

    A function whose source cannot be read is taken as written.
    """
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return False
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return bool(defs) and any(_raises_not_implemented(s) for s in defs[0].body)
