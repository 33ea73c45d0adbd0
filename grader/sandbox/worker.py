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
"""

from __future__ import annotations

import dis
import faulthandler
import importlib
import importlib.util
import inspect
import linecache
import os
import socket
import sys
import time
import traceback
import types
from collections.abc import Callable
from types import ModuleType, TracebackType
from typing import Any, BinaryIO

from grader import codec
from grader.sandbox.limits import DUMP_SIGNAL
from grader.sandbox.protocol import recv_frame, send_frame, sync_marker

__all__ = ["ForbiddenCall", "serve"]

_MAX_FRAMES = 8
_RAISE = dis.opmap["RAISE_VARARGS"]
_RESUME = dis.opmap.get("RESUME")


class ForbiddenCall(Exception):
    """Raised in the child when student code calls a function the check forbids."""


class _Handles:
    def __init__(self, gen: int) -> None:
        self.gen = gen
        self.objects: dict[int, Any] = {}

    def make(self, obj: Any) -> codec.Handle:
        hid = len(self.objects) + 1
        self.objects[hid] = obj
        cls = type(obj)
        try:
            text = object.__repr__(obj)
        except Exception:  # pragma: no cover - object.__repr__ does not fail
            text = "?"
        return codec.Handle(hid, f"{cls.__module__}.{cls.__qualname__}", text[:200], self.gen)

    def get(self, hid: int) -> Any:
        if hid not in self.objects:
            raise codec.CodecError(f"unknown handle {hid}")
        return self.objects[hid]


class _Context:
    """What every request needs: the module, its file, the handles, the traceback file."""

    def __init__(self, module: ModuleType, student_file: str, gen: int, dump: _Dump) -> None:
        self.module = module
        self.student_file = student_file
        self.student_dir = os.path.dirname(student_file) + os.sep
        self.handles = _Handles(gen)
        self.dump = dump
        self.last_error: BaseException | None = None


class _Dump:
    """Writes the stacks of all threads into the traceback file when a call runs out of time.

    Where there are signals (POSIX), `faulthandler` dumps on `DUMP_SIGNAL`, which the
    grader sends just before it ends a child that ran out of time: nothing runs until then,
    and a call that finishes is never dumped. Elsewhere (Windows) the dump is armed per
    request for the moment just before the grader would give up (`dump_at`, sent by the
    grader) and disarmed when the request returns. The dump is written without the GIL, so
    it comes even while the student's code spins in Python or in C; reading a running
    thread's frames that way is not safe, which is why it happens only at the very end.
    """

    def __init__(self, path: str) -> None:
        self.file: BinaryIO | None = None
        if not path:
            return
        try:
            self.file = open(path, "wb", buffering=0)  # noqa: SIM115 - kept open
            if DUMP_SIGNAL is not None:
                faulthandler.register(DUMP_SIGNAL, file=self.file, all_threads=True)
        except (OSError, ValueError, RuntimeError):
            self.file = None

    def arm(self, seconds: Any) -> None:
        """Dump once after `seconds`, where there are no signals (else nothing to do)."""
        if DUMP_SIGNAL is not None or self.file is None:
            return
        if not isinstance(seconds, int | float) or seconds <= 0:
            return
        try:
            self.file.seek(0)
            self.file.truncate()
            faulthandler.dump_traceback_later(float(seconds), repeat=False, file=self.file)
        except (OSError, ValueError):
            pass

    def disarm(self) -> None:
        """Cancel a dump that has not happened yet."""
        if DUMP_SIGNAL is None and self.file is not None:
            faulthandler.cancel_dump_traceback_later()


def _build(target: str, args: list[Any], kwargs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    module_name, _, name = target.partition(":")
    if not (module_name == "framework" or module_name.startswith("framework.")) or not name:
        raise codec.CodecError(f"refusing to build {target!r}: only framework objects")
    module = importlib.import_module(module_name)
    obj = getattr(module, name)(*args, **kwargs)
    for key, value in attrs.items():
        setattr(obj, key, value)
    return obj


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


def _exc_info(e: BaseException, student_dir: str) -> dict[str, Any]:
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


def _is_todo(e: BaseException, student_file: str) -> bool:
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


def _failure(e: BaseException, ctx: _Context, **extra: Any) -> dict[str, Any]:
    ctx.last_error = e  # for the in-process backend's debugger (see inline.py)
    return {
        "ok": False,
        "exc": _exc_info(e, ctx.student_dir),
        "todo": _is_todo(e, ctx.student_file),
        **extra,
    }


def _import_student(path: str) -> ModuleType:
    directory = os.path.dirname(path)
    sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location("student", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["student"] = module
    spec.loader.exec_module(module)
    return module


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
    dump = _Dump(traceback_path)
    dump.arm(import_dump_at)
    linecache.clearcache()
    try:
        module = _import_student(student_file)
    except BaseException as e:  # SyntaxError, ImportError, SystemExit at import, ...
        replier.send(codec.dumps({"ready": False, "exc": _exc_info(e, student_dir)}))
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
            payload = codec.dumps({"ok": False, "exc": _exc_info(e, student_dir)})
        replier.send(payload)


def _missing(name: str) -> dict[str, Any]:
    """The reply for a student function that does not exist."""
    exc = {"type": "AttributeError", "mro": ["AttributeError"], "message": name, "frames": []}
    return {"ok": False, "missing": True, "exc": exc}


def _handle(frame: bytes | bytearray, ctx: _Context) -> Any:
    try:
        req = codec.loads(frame, resolve_handle=ctx.handles.get, build=_build)
        op = req["op"]
        traps = _Traps(req.get("forbid") or [])
        if op == "getattr":
            return {"ok": True, "value": getattr(req["target"], req["name"])}
        if op == "build":
            return {"ok": True, "value": req["target"]}
        if op == "map":
            fn = getattr(ctx.module, req["name"], None)
            if not callable(fn):
                return _missing(req["name"])
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
        return {"ok": False, "exc": _exc_info(e, ctx.student_dir)}
    return _run(ctx, req, traps, lambda: _call(fn, args, kwargs, ctx, req.get("count") or []))


def _run(ctx: _Context, req: dict[str, Any], traps: _Traps, body: Callable[[], Any]) -> Any:
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
    counter = _Counter(ctx.module, count)
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


class _Counter:
    """Counts calls of named student functions by code object, during one call.

    Lets a check tell a `roundtrip` that really calls `decode_id` from one that returns its
    input, whichever name the student's code calls it by. Uses the profile hook of this
    thread (`sys.setprofile`); a generator's resumptions are not new calls.
    """

    def __init__(self, module: ModuleType, names: list[str]) -> None:
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


def _trap_template(*args: Any, **kwargs: Any) -> Any:
    # runs with the trapped function's globals: reach this module through the builtins
    raise __import__("sys").modules["grader.sandbox.worker"]._trapped("TARGET")


_TRAP_TARGET = "TARGET"
_hits: list[str] = []


def _trapped(target: str) -> ForbiddenCall:
    if target not in _hits:
        _hits.append(target)
    module, _, qualname = target.partition(":")
    return ForbiddenCall(
        f"{module}.{qualname} may not be used here: this check wants your own implementation"
    )


class _Traps:
    """Swaps the code of forbidden functions for traps, for the duration of one request."""

    def __init__(self, targets: list[Any]) -> None:
        self.targets = [str(t) for t in targets]
        self.swapped: list[tuple[types.FunctionType, types.CodeType]] = []
        self.fns = [(target, _resolve(target)) for target in self.targets]

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


def _resolve(target: str) -> types.FunctionType:
    """The Python function named by ``"module:qualname"``."""
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
