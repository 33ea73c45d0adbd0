"""Objects that stay in the sandbox child, and framework objects the grader asks it to build.

A value the codec cannot send (a student's class instance, a `framework.Module` the
student built) stays in the child and goes to the grader as a `Handle`: a number, a type
name, a short description and this child's generation ``gen``, so that a handle from a
replaced child is never taken for one of this child's objects. `Handles` keeps them for
the life of the child; `build` makes the objects of a `grader.codec.Build` request,
refusing anything outside the `framework` package. What this module does not do: decide
when a value becomes a handle (the codec's encoder asks for one when it must) or free
them. The idea is the proxy of remote-object protocols (an object id in place of the
object), without any of their remote method dispatch: a call on a handle is a request.

Example:
    >>> handles = Handles(gen=3)
    >>> h = handles.make(object())
    >>> (h.id, h.type_name, h.gen), handles.get(h.id) is not None
    ((1, 'builtins.object', 3), True)
"""

from __future__ import annotations

import importlib
from typing import Any

from grader import codec

__all__ = ["Handles", "build"]


class Handles:
    """The objects of one child that the grader holds handles to, by handle id."""

    def __init__(self, gen: int) -> None:
        self.gen = gen
        self.objects: dict[int, Any] = {}

    def make(self, obj: Any) -> codec.Handle:
        """Keep `obj` and return the handle that names it (the codec's `make_handle`)."""
        hid = len(self.objects) + 1
        self.objects[hid] = obj
        cls = type(obj)
        try:
            text = object.__repr__(obj)
        except Exception:  # pragma: no cover - object.__repr__ does not fail
            text = "?"
        return codec.Handle(hid, f"{cls.__module__}.{cls.__qualname__}", text[:200], self.gen)

    def get(self, hid: int) -> Any:
        """The object of handle `hid` (the codec's `resolve_handle`).

        Raises:
            CodecError: no object of this child has that handle.
        """
        if hid not in self.objects:
            raise codec.CodecError(f"unknown handle {hid}")
        return self.objects[hid]


def build(target: str, args: list[Any], kwargs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """The object ``module:Name(*args, **kwargs)`` of the `framework` package, `attrs` set.

    Raises:
        CodecError: a target outside `framework`; what the constructor raises goes through.
    """
    module_name, _, name = target.partition(":")
    if not (module_name == "framework" or module_name.startswith("framework.")) or not name:
        raise codec.CodecError(f"refusing to build {target!r}: only framework objects")
    module = importlib.import_module(module_name)
    obj = getattr(module, name)(*args, **kwargs)
    for key, value in attrs.items():
        setattr(obj, key, value)
    return obj
