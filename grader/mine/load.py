"""The student's labs, imported into this process: their modules and which functions exist.

`load_lab_module(info)` imports ``labs/labNN/student.py`` under a name of its own (every
lab's file is called ``student.py``); a file that does not import is reported, not
raised. `is_stub(fn)` tells a function that still has its lab's
``raise NotImplementedError(...)`` from one the student wrote, by reading its source.

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
from pathlib import Path
from types import ModuleType
from typing import Any

from grader.labs import LabInfo

__all__ = ["LoadedLab", "is_stub", "load_lab_module"]


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


def student_path(loaded: LoadedLab) -> Path:
    """The student file of a loaded lab (for error messages)."""
    return loaded.info.student.resolve()
