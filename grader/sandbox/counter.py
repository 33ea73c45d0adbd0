"""Counting the calls of named student functions during one call, by code object.

Lets a check tell a ``roundtrip`` that really calls ``decode_id`` from one that returns its
input, whichever name the student's code calls it by: a local alias
(``enc = encode_byte``) or a module-level one runs the same code object, so it counts too.
What this module does not do: trap or change any call (see `grader.sandbox.traps`), or
count calls of functions outside the student's module. The mechanism is the profile hook
of this thread (`sys.setprofile`), as `cProfile` uses; a generator's resumptions are not new
calls (a frame starts at a ``RESUME`` with argument 0; others are resumptions).

Example:
    >>> import types
    >>> m = types.ModuleType("m")
    >>> exec("def f():\\n    return 1\\ndef g():\\n    return f() + f()", m.__dict__)
    >>> counter = CallCounter(m, ["f"])
    >>> counter.start(); _ = m.g(); counter.stop()
    >>> counter.counts
    {'f': 2}
"""

from __future__ import annotations

import dis
import inspect
import sys
import types
from typing import Any

__all__ = ["CallCounter"]

_RESUME = dis.opmap.get("RESUME")


class CallCounter:
    """Counts calls of the functions `names` of `module` between `start` and `stop`."""

    def __init__(self, module: types.ModuleType, names: list[str]) -> None:
        self.counts = {str(name): 0 for name in names}
        self.codes: dict[types.CodeType, tuple[str, frozenset[int]]] = {}
        for name in self.counts:
            code = _code_of(getattr(module, name, None))
            if code is not None:
                self.codes[code] = (name, _entries(code))
        self.previous: Any = None

    def start(self) -> None:
        if self.codes:
            self.previous = sys.getprofile()
            sys.setprofile(self._profile)

    def stop(self) -> None:
        if self.codes:
            sys.setprofile(self.previous)

    def _profile(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call":
            hit = self.codes.get(frame.f_code)
            if hit is not None and (not hit[1] or frame.f_lasti in hit[1]):
                self.counts[hit[0]] += 1


def _code_of(obj: Any) -> types.CodeType | None:
    """The code object behind a function, method or decorated function (None if none)."""
    obj = getattr(obj, "__func__", obj)
    try:
        obj = inspect.unwrap(obj)
    except ValueError:
        return None
    code = getattr(obj, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _entries(code: types.CodeType) -> frozenset[int]:
    """Offsets where a frame of `code` starts (not where a generator resumes)."""
    if _RESUME is None:
        return frozenset()
    return frozenset(
        i.offset for i in dis.get_instructions(code) if i.opcode == _RESUME and i.arg == 0
    )
