"""The student's module inside the sandbox child: importing it, and describing what it raised.

`import_student` loads the student's file as the module ``student`` (its folder first on
``sys.path``, so its own helpers import). `describe_exception` turns an exception into the
plain data the grader is sent: type, MRO names, message, and only the frames in the
student's own folder (the grader's and the framework's frames say nothing to a student),
with the position of a SyntaxError. `is_todo` tells the stub's own
``raise NotImplementedError`` from one that numpy or a builtin raises inside a finished
function. What this module does not do: run a call or send a reply (`grader.sandbox.worker`).
The frames follow `traceback.extract_tb`, kept to the last few as pytest's ``--tb=short``.

Example:
    >>> try:
    ...     {}["k"]
    ... except KeyError as e:
    ...     info = describe_exception(e, "/nowhere/")
    >>> info["type"], info["mro"][:2], info["frames"]
    ('KeyError', ['KeyError', 'LookupError'], [])
"""

from __future__ import annotations

import dis
import importlib.util
import os
import sys
import traceback
from types import ModuleType, TracebackType
from typing import Any

__all__ = ["describe_exception", "import_student", "is_todo"]

_MAX_FRAMES = 8
_RAISE = dis.opmap["RAISE_VARARGS"]


def import_student(path: str) -> ModuleType:
    """Import the file `path` as the module ``student``; whatever it raises goes through."""
    directory = os.path.dirname(path)
    sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location("student", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["student"] = module
    spec.loader.exec_module(module)
    return module


def describe_exception(e: BaseException, student_dir: str) -> dict[str, Any]:
    """What the grader is told of `e`: ``type``, ``mro``, ``message``, ``frames`` (those in
    `student_dir`, a folder ending in the separator) and, for a SyntaxError, where it is."""
    try:
        message = str(e)
    except Exception:
        message = "<unprintable exception>"
    info: dict[str, Any] = {
        "type": type(e).__name__,
        "mro": [c.__name__ for c in type(e).__mro__],
        "message": message[:2000],
        "frames": _frames(e.__traceback__, student_dir),
    }
    if isinstance(e, SyntaxError):
        info["message"] = str(e.msg)[:2000]
        info["file"] = os.path.relpath(e.filename or "?", student_dir)
        info["line"] = e.lineno or 0
        info["code"] = (e.text or "").rstrip()
        info["offset"] = e.offset or 0
    return info


def _frames(tb: TracebackType | None, student_dir: str) -> list[dict[str, Any]]:
    out = []
    for fs in traceback.extract_tb(tb):
        if os.path.abspath(fs.filename).startswith(student_dir):
            out.append(
                {
                    "file": os.path.relpath(fs.filename, student_dir),
                    "line": fs.lineno or 0,
                    "func": fs.name,
                    "code": (fs.line or "").strip(),
                }
            )
    return out[-_MAX_FRAMES:]


def is_todo(e: BaseException, student_file: str) -> bool:
    """A NotImplementedError raised by a `raise` statement in the student's own file."""
    if not isinstance(e, NotImplementedError):
        return False
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if os.path.abspath(code.co_filename) != student_file:
        return False
    lasti = tb.tb_lasti
    return 0 <= lasti < len(code.co_code) and code.co_code[lasti] == _RAISE
