"""The sandbox child: imports the student's module and serves calls into it.

Runs in a process forked from the zygote or started fresh (`child.py`). Its stdout and
stderr are a pipe the grader drains and caps; its replies go over its own socket. Everything
here can be tampered with by student code (it shares this process), so the grader trusts
none of it: it only decodes plain data from this side and judges in its own process.

The protocol (each message one `protocol` frame holding one `grader.codec` frame):

1. After importing the student module the child sends ``{"ready": True}`` or
   ``{"ready": False, "exc": {...}}`` (a SyntaxError, an ImportError, sys.exit, ...).
2. Then it answers one request at a time until the socket closes. A request is a dict with
   ``op`` and:

   - ``"call"``: ``name``, ``target`` (None: a function of the student module; a `Handle`:
     a method of that object), ``args``, ``kwargs``; optional ``count`` and ``forbid``.
   - ``"map"``: ``name``, ``calls`` (one argument list per call, all in one round trip; the
     first exception stops the sweep and the reply's ``index`` says which call raised);
     optional ``forbid``; ``args`` false: the reply's ``args`` is empty instead of every
     argument list after the calls (a sweep of thousands of calls that never looks at
     them).
   - ``"getattr"``: ``target``, ``name``. ``"build"``: ``target`` (a `codec.Build`).
   - ``count``: names of student functions. Their calls during this call are counted by
     code object, so a local alias (``enc = encode_byte``) or a module-level one counts
     too; the reply's ``counts`` maps each name to its number of calls.
   - ``forbid``: ``"module:qualname"`` targets (``"framework.math_ops:softmax"``,
     ``"framework.tokenizer:ByteTokenizer.encode"``). While the student's code runs, each
     target's code object is swapped for a trap that raises `ForbiddenCall`; as every
     alias, ``from ... import ... as`` and bound method shares the function object, all of
     them are trapped. The reply's ``forbidden`` lists the targets that were called, even if
     the student's code caught the exception.

   A reply is ``{"ok": True, "value", "args", "kwargs", "seconds", "counts", "forbidden"}``
   (``args``/``kwargs`` as they are after the call: in-place writes show) or
   ``{"ok": False, "exc": {"type", "mro", "message", "frames"}, "todo", ...}`` with
   ``missing`` (no such function) set when so. A request that fails here (building an
   argument, a ``getattr``) is an ordinary failure: the grader never takes a reply of this
   process, which the student's code controls, for a grader error.
   ``todo`` is true only for the stub's own error: a NotImplementedError raised by a
   ``raise`` statement in the student's file. One that numpy or a builtin raises inside a
   finished function (indexing a multi-dimensional memoryview, say) is an ordinary
   exception.
3. When a call (or the import) runs out of time, the grader has the child dump the stacks
   of its threads into its traceback file before it kills it (`faulthandler`: on
   `DUMP_SIGNAL`, which the grader sends; where there are no signals, once at ``dump_at``
   seconds, sent with the request, shortly before its time is up), so that it can show
   the line where the code was stuck.
4. A child started with ``sync=True`` writes `protocol.sync_marker(n)` to its stdout right
   before its n-th reply (the ready message is number 0), for a grader that drains the
   output in a thread.

Objects that the codec cannot send stay here and go back as a `Handle` that carries this
child's generation number ``gen``; a handle is only valid in the child that made it.

This module is the request loop: `serve`, and the handlers of ``call`` and ``map``. Its
parts, one idea each, sit beside it: `studentcode` (importing the student's module,
describing its exceptions, telling its TODO), `handles` (objects kept here, framework
objects built on request), `counter` (``count``), `traps` (``forbid``, `ForbiddenCall`)
and `stackdump` (point 3). What it does not do: judge anything (the grader does, in its
own process) or limit this process (`grader.sandbox.limits`, applied before `serve`).
"""

from __future__ import annotations

import linecache
import os
import socket
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from grader import codec
from grader.codec.values import MAX_REPEAT, entropy
from grader.sandbox.counter import CallCounter
from grader.sandbox.handles import Handles, build
from grader.sandbox.protocol import recv_frame, send_frame, sync_marker
from grader.sandbox.seeding import generators
from grader.sandbox.stackdump import StackDump
from grader.sandbox.studentcode import describe_exception, import_student, is_todo
from grader.sandbox.traps import Traps

__all__ = ["serve"]


class _Context:
    """What every request needs: the module, its file, the handles, the traceback file."""

    def __init__(self, module: ModuleType, student_file: str, gen: int, dump: StackDump) -> None:
        self.module = module
        self.student_file = student_file
        self.student_dir = os.path.dirname(student_file) + os.sep
        self.handles = Handles(gen)
        self.dump = dump
        self.last_error: BaseException | None = None


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


class _Replier:
    """Sends replies, each after the output that came before it (and its sync marker)."""

    def __init__(self, sock: socket.socket, sync: bool) -> None:
        self.sock = sock
        self.sync = sync
        self.n = 0

    def send(self, payload: bytes) -> None:
        _flush()
        if self.sync:
            try:
                os.write(1, sync_marker(self.n))
            except OSError:
                pass
        self.n += 1
        send_frame(self.sock, payload)


def serve(
    sock: socket.socket,
    student_path: str,
    *,
    gen: int = 0,
    traceback_path: str = "",
    import_dump_at: float = 0.0,
    sync: bool = False,
) -> None:
    """Import the student module, report readiness, then answer requests until EOF."""
    student_file = os.path.abspath(student_path)
    student_dir = os.path.dirname(student_file) + os.sep
    replier = _Replier(sock, sync)
    dump = StackDump(traceback_path)
    dump.arm(import_dump_at)
    linecache.clearcache()
    try:
        module = import_student(student_file)
    except BaseException as e:  # SyntaxError, ImportError, SystemExit at import, ...
        replier.send(codec.dumps({"ready": False, "exc": describe_exception(e, student_dir)}))
        return
    dump.disarm()
    replier.send(codec.dumps({"ready": True}))
    ctx = _Context(module, student_file, gen, dump)
    while True:
        try:
            frame = recv_frame(sock)
        except EOFError:
            return
        reply = _handle(frame, ctx)
        try:
            payload = codec.dumps(reply, make_handle=ctx.handles.make)
        except Exception as e:  # a value the codec cannot express even as a handle
            payload = codec.dumps({"ok": False, "exc": describe_exception(e, student_dir)})
        replier.send(payload)


def _missing(name: str) -> dict[str, Any]:
    """The reply for a student function that does not exist."""
    exc = {"type": "AttributeError", "mro": ["AttributeError"], "message": name, "frames": []}
    return {"ok": False, "missing": True, "exc": exc}


def _failure(e: BaseException, ctx: _Context, **extra: Any) -> dict[str, Any]:
    ctx.last_error = e  # for the in-process backend's debugger (see inline.py)
    return {
        "ok": False,
        "exc": describe_exception(e, ctx.student_dir),
        "todo": is_todo(e, ctx.student_file),
        **extra,
    }


def _handle(frame: bytes | bytearray, ctx: _Context) -> Any:
    try:
        req = codec.loads(frame, resolve_handle=ctx.handles.get, build=build)
        op = req["op"]
        traps = Traps(req.get("forbid") or [])
        if op == "getattr":
            return {"ok": True, "value": getattr(req["target"], req["name"])}
        if op == "build":
            return {"ok": True, "value": req["target"]}
        if op == "map":
            fn = getattr(ctx.module, req["name"], None)
            if not callable(fn):
                return _missing(req["name"])
            if "repeat" in req:  # one argument list, a generator of its own per call
                args, seed, n = _seeded(req)
                return _run(ctx, req, traps, lambda: _map_seeded(fn, args, seed, n, ctx))
            keep = req.get("args", True) is not False
            return _run(ctx, req, traps, lambda: _map(fn, req["calls"], ctx, keep))
        if op != "call":
            raise codec.CodecError(f"unknown op {op!r}")
        target, name = req["target"], req["name"]
        if target is None and not callable(getattr(ctx.module, name, None)):
            return _missing(name)
        fn = getattr(ctx.module, name) if target is None else getattr(target, name)
        args, kwargs = req["args"], req["kwargs"]
    except BaseException as e:  # a property of a student object that raised, say
        return {"ok": False, "exc": describe_exception(e, ctx.student_dir)}
    return _run(ctx, req, traps, lambda: _call(fn, args, kwargs, ctx, req.get("count") or []))


def _run(ctx: _Context, req: dict[str, Any], traps: Traps, body: Callable[[], Any]) -> Any:
    """Run `body` with the traps set; add what the traps saw."""
    ctx.dump.arm(req.get("dump_at"))
    traps.set()
    try:
        reply = body()
    finally:
        traps.unset()
        ctx.dump.disarm()
    if traps.targets:
        reply["forbidden"] = traps.hits()
    return reply


def _call(
    fn: Any, args: list[Any], kwargs: dict[str, Any], ctx: _Context, count: list[str]
) -> dict[str, Any]:
    counter = CallCounter(ctx.module, count)
    start = time.perf_counter()
    counter.start()
    try:
        value = fn(*args, **kwargs)
    except BaseException as e:  # the student's exception, SystemExit included
        counter.stop()
        return _failure(e, ctx, args=list(args), kwargs=kwargs)
    counter.stop()
    return {
        "ok": True,
        "value": value,
        "args": list(args),
        "kwargs": kwargs,
        "seconds": time.perf_counter() - start,
        "counts": counter.counts,
    }


def _map(fn: Any, calls: list[list[Any]], ctx: _Context, keep: bool = True) -> dict[str, Any]:
    """Call one student function once per argument list; stop at the first exception.

    `keep`: send every argument list back as it is after the calls (else an empty list).
    """
    values = []
    for index, args in enumerate(calls):
        try:
            values.append(fn(*args))
        except BaseException as e:
            return _failure(e, ctx, index=index)
    return {"ok": True, "value": values, "args": calls if keep else []}


def _seeded(req: dict[str, Any]) -> tuple[list[Any], list[int], int]:
    """The argument list, seed prefix and count of a seeded sweep, checked."""
    calls, seed, n = req["calls"], req["seed"], req["repeat"]
    if not isinstance(calls, list) or len(calls) != 1 or not isinstance(calls[0], list):
        raise codec.CodecError("a seeded sweep has exactly one argument list")
    if type(n) is not int or not 0 <= n <= MAX_REPEAT:
        raise codec.CodecError(f"a seeded sweep makes 0 to {MAX_REPEAT} calls")
    return calls[0], entropy([*seed, 0])[:-1], n


def _map_seeded(fn: Any, args: list[Any], seed: list[int], n: int, ctx: _Context) -> dict[str, Any]:
    """``fn(*args, default_rng([*seed, i]))`` for i < n, the same argument objects each
    time; stop at the first exception. No argument list is sent back."""
    values = []
    for index, rng in enumerate(generators(seed, n)):  # = default_rng([*seed, index])
        try:
            values.append(fn(*args, rng))
        except BaseException as e:
            return _failure(e, ctx, index=index)
    return {"ok": True, "value": values, "args": []}
