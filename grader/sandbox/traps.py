"""Traps for forbidden calls: while the student's code runs, a named function raises instead.

A check that wants the student's own softmax forbids ``"framework.math_ops:softmax"``. For
the duration of one request, each target's code object is swapped for a trap that raises
`ForbiddenCall`; every alias, ``from ... import ... as`` and bound method shares the
function object, so all of them are trapped, and `Traps.hits` lists the targets that were
called even if the student's code caught the exception. What this module does not do:
trap a builtin, a C function or a closure (`resolve` refuses them), or stop code that
reimplements the forbidden function. The idea: patch the function object itself (its
``__code__``), not the names bound to it, as `unittest.mock.patch` would have to, alias
by alias.

Example:
    >>> import types
    >>> m = __import__("sys").modules["m"] = types.ModuleType("m")
    >>> exec("def f():\\n    return 1", m.__dict__)
    >>> traps = Traps(["m:f"])
    >>> traps.set()
    >>> try:
    ...     m.f()
    ... except ForbiddenCall as e:
    ...     print(e)
    m.f may not be used here: this check wants your own implementation
    >>> traps.unset(); m.f(), traps.hits()
    (1, ['m:f'])
    >>> del __import__("sys").modules["m"]
"""

from __future__ import annotations

import importlib
import inspect
import types
from typing import Any

from grader import codec

__all__ = ["ForbiddenCall", "Traps", "resolve"]

_TRAP_TARGET = "TARGET"
_hits: list[str] = []  # the targets called since the traps were last set


class ForbiddenCall(Exception):
    """Raised in the child when student code calls a function the check forbids."""


def _trap_template(*args: Any, **kwargs: Any) -> Any:
    # runs with the trapped function's globals: reach this module through the builtins
    raise __import__("sys").modules["grader.sandbox.traps"]._trapped("TARGET")


def _trapped(target: str) -> ForbiddenCall:
    if target not in _hits:
        _hits.append(target)
    module, _, qualname = target.partition(":")
    return ForbiddenCall(
        f"{module}.{qualname} may not be used here: this check wants your own implementation"
    )


class Traps:
    """Swaps the code of forbidden functions for traps, for the duration of one request."""

    def __init__(self, targets: list[Any]) -> None:
        self.targets = [str(t) for t in targets]
        self.swapped: list[tuple[types.FunctionType, types.CodeType]] = []
        self.fns = [(target, resolve(target)) for target in self.targets]

    def set(self) -> None:
        _hits.clear()
        for target, fn in self.fns:
            original = fn.__code__
            consts = tuple(
                target if c == _TRAP_TARGET else c for c in _trap_template.__code__.co_consts
            )
            trap = _trap_template.__code__.replace(
                co_consts=consts, co_name=original.co_name, co_qualname=original.co_qualname
            )
            fn.__code__ = trap
            self.swapped.append((fn, original))

    def unset(self) -> None:
        for fn, original in reversed(self.swapped):
            fn.__code__ = original
        self.swapped.clear()

    def hits(self) -> list[str]:
        return [t for t in self.targets if t in _hits]


def resolve(target: str) -> types.FunctionType:
    """The Python function named by ``"module:qualname"``.

    Raises:
        CodecError: a malformed target, or one that is not a plain Python function.
    """
    module_name, _, qualname = target.partition(":")
    if not module_name or not qualname:
        raise codec.CodecError(f"forbid target {target!r} is not 'module:qualname'")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj = getattr(obj, "__func__", obj)
    try:
        obj = inspect.unwrap(obj)
    except ValueError:
        pass
    if not isinstance(obj, types.FunctionType) or obj.__closure__:
        raise codec.CodecError(f"cannot forbid {target!r}: not a plain Python function")
    return obj
