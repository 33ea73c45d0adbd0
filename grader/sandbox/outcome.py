"""What one call into student code came to: its kind, and the record of what went wrong.

`CallOutcome.kind` is an `Outcome`; `CallOutcome.exc` an `ExcInfo` with its `Frame`s. The
child (`grader.sandbox.worker`) keeps sending plain dicts over the wire; `exc_info` turns
one into an `ExcInfo` on the grader's side. The child runs the student's code, so that
dict is hostile input: a field of the wrong type, a huge number or an endless list never
raises here, it becomes the field's safe default (a string is cut, a list is shortened).

What it does not do: render anything (`grader.explain` words an outcome for the report),
or decide a kind from a flag in the reply (`grader.sandbox.session` does, and no flag of
the child's makes a grader error).

Example:
    >>> exc_info({"type": "ValueError", "frames": [{"line": "3", "func": "f"}]}).frames
    [Frame(file='?', line=0, func='f', code='')]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["CallOutcome", "ExcInfo", "Frame", "Outcome", "exc_info", "frames_of"]

_MAX_FRAMES = 64  # frames kept of one record (the worker sends at most a few)
_MAX_NAMES = 64  # names kept in `mro`, `builtins` and `targets`
_MAX_MESSAGE = 4000  # characters of a message (the worker cuts at 2000)
_MAX_NAME = 300  # characters of a type, file or function name, or a line of code


class Outcome(StrEnum):
    """The kind of a `CallOutcome` (its value is the word the reports used before)."""

    OK = "ok"
    EXCEPTION = "exception"  # the student's code raised
    TODO = "todo"  # the stub's own NotImplementedError
    MISSING = "missing"  # no such function
    TIMEOUT = "timeout"
    CRASH = "crash"  # the process ended; see `CallOutcome.exit_status`
    OVERFLOW = "overflow"  # printed past the cap
    IMPORT = "import"  # the module failed to import
    FORBIDDEN = "forbidden"  # the call used a function the check forbids
    STALE = "stale"  # an argument is a handle of a child that has since been replaced
    UNREADABLE = "unreadable"  # the child's reply could not be read (too large, malformed)
    HARNESS = "harness"  # the grader could not send its request: the grader's own failure


@dataclass(frozen=True)
class Frame:
    """One frame of the student's own code: file (relative to its folder), line, function
    and the line's source."""

    file: str = "?"
    line: int = 0
    func: str = "?"
    code: str = ""


@dataclass
class ExcInfo:
    """What went wrong in a call that did not return normally.

    Attributes:
        type: the exception's class name (``"?"`` when unknown).
        message: its message.
        frames: the student's frames, outermost first (for a timeout: where it was stuck).
        mro: the class names of the exception's MRO, as the child reported them.
        builtins: the builtin classes among them, where the child says so (else None).
        file, line, offset, code: a syntax error's place (`line` None for any other).
        repeat, first: a timeout that failed at once because the same function timed out
            before (`first`: that timeout's seconds).
        deadline: the run's deadline, for a timeout it cut short.
        targets: ``"module:qualname"`` of each forbidden function that was called.
        index: which call of a `Session.map` raised.
        gen: the generation of a stale handle's child.
    """

    type: str = "?"
    message: str = ""
    frames: list[Frame] = field(default_factory=list)
    mro: list[str] = field(default_factory=list)
    builtins: list[str] | None = None
    file: str = ""
    line: int | None = None
    offset: int = 0
    code: str = ""
    repeat: bool = False
    first: float | None = None
    deadline: float | None = None
    targets: list[str] = field(default_factory=list)
    index: int | None = None
    gen: int | None = None


@dataclass
class CallOutcome:
    """What happened in one call into student code.

    `kind` says what (see `Outcome`): ``HARNESS`` only when the grader could not send its
    request, which only this side decides, never a flag in the child's reply, since the
    child runs the student's code. `exc` describes every kind but ``OK``; `error` is it, or
    an empty record for ``OK``. `counts` are the calls counted during an ``OK`` call.
    """

    kind: Outcome
    value: Any = None
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    exc: ExcInfo | None = None
    output: str = ""
    output_bytes: int = 0
    seconds: float = 0.0
    exit_status: int | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.kind is Outcome.OK

    @property
    def error(self) -> ExcInfo:
        """`exc`, or an empty record when there is none."""
        return self.exc if self.exc is not None else ExcInfo()


def _str(x: Any, default: str, limit: int = _MAX_NAME) -> str:
    if not isinstance(x, str):
        return default
    return x if len(x) <= limit else x[:limit] + f"… ({len(x)} chars)"


def _int(x: Any, default: int | None) -> int | None:
    if isinstance(x, bool) or not isinstance(x, int) or not -(10**9) < x < 10**9:
        return default
    return x


def _float(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    v = float(x) if abs(x) < 1e12 else math.inf
    return v if math.isfinite(v) and v >= 0 else None


def _names(x: Any) -> list[str] | None:
    if not isinstance(x, list | tuple):
        return None
    return [_str(n, "?") for n in x[:_MAX_NAMES] if isinstance(n, str)]


def frames_of(x: Any) -> list[Frame]:
    """The frames of a plain list of ``{"file", "line", "func", "code"}`` dicts; anything
    malformed in it is dropped or defaulted."""
    if not isinstance(x, list | tuple):
        return []
    frames = []
    for f in x[-_MAX_FRAMES:]:
        if isinstance(f, Frame):
            frames.append(f)
        elif isinstance(f, dict):
            line = _int(f.get("line"), 0) or 0
            func = _str(f.get("func"), "?")
            frames.append(Frame(_str(f.get("file"), "?"), line, func, _str(f.get("code"), "")))
    return frames


def exc_info(x: Any) -> ExcInfo:
    """The `ExcInfo` of the child's exception record (a dict, or anything else it sent).

    Never raises: a record that is not a dict is described by its (cut) repr, a field of
    the wrong type takes its default.
    """
    if not isinstance(x, dict):
        return ExcInfo(message=_str(repr(x), "", 200))
    return ExcInfo(
        type=_str(x.get("type"), "?"),
        message=_str(x.get("message"), "", _MAX_MESSAGE),
        frames=frames_of(x.get("frames")),
        mro=_names(x.get("mro")) or [],
        builtins=_names(x.get("builtins")),
        file=_str(x.get("file"), ""),
        line=_int(x.get("line"), None),
        offset=_int(x.get("offset"), 0) or 0,
        code=_str(x.get("code"), ""),
        targets=_names(x.get("targets")) or [],
    )
