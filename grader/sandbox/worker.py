"""The sandbox child: imports the student's module and serves calls into it.

Runs in a process forked from the zygote. Its stdout and stderr are a pipe the grader
drains and caps; its replies go over its own socket. Everything here can be tampered with
by student code (it shares this process), so the grader trusts none of it: it only decodes
plain data from this side and judges in its own process.
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import socket
import sys
import time
import traceback
from types import ModuleType, TracebackType
from typing import Any

from grader import codec
from grader.sandbox.protocol import recv_frame, send_frame

_MAX_FRAMES = 8


class _Handles:
    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}

    def make(self, obj: Any) -> codec.Handle:
        hid = len(self.objects) + 1
        self.objects[hid] = obj
        cls = type(obj)
        try:
            text = object.__repr__(obj)
        except Exception:  # pragma: no cover - object.__repr__ does not fail
            text = "?"
        return codec.Handle(hid, f"{cls.__module__}.{cls.__qualname__}", text[:200])

    def get(self, hid: int) -> Any:
        if hid not in self.objects:
            raise codec.CodecError(f"unknown handle {hid}")
        return self.objects[hid]


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


def serve(sock: socket.socket, student_path: str) -> None:
    """Import the student module, report readiness, then answer requests until EOF."""
    student_dir = os.path.dirname(os.path.abspath(student_path)) + os.sep
    handles = _Handles()
    linecache.clearcache()
    try:
        module = _import_student(student_path)
    except BaseException as e:  # SyntaxError, ImportError, SystemExit at import, ...
        _flush()
        send_frame(sock, codec.dumps({"ready": False, "exc": _exc_info(e, student_dir)}))
        return
    _flush()
    send_frame(sock, codec.dumps({"ready": True}))
    while True:
        try:
            frame = recv_frame(sock)
        except EOFError:
            return
        reply = _handle(frame, module, handles, student_dir)
        _flush()
        try:
            payload = codec.dumps(reply, make_handle=handles.make)
        except Exception as e:  # a value the codec cannot express even as a handle
            payload = codec.dumps({"ok": False, "exc": _exc_info(e, student_dir)})
        send_frame(sock, payload)


def _missing(name: str) -> dict[str, Any]:
    """The reply for a student function that does not exist."""
    exc = {"type": "AttributeError", "mro": ["AttributeError"], "message": name, "frames": []}
    return {"ok": False, "missing": True, "exc": exc}


def _map(module: ModuleType, req: dict[str, Any], student_dir: str) -> Any:
    """Call one student function once per argument tuple; stop at the first exception."""
    name = req["name"]
    fn = getattr(module, name, None)
    if not callable(fn):
        return _missing(name)
    values = []
    calls = req["calls"]
    for index, args in enumerate(calls):
        try:
            values.append(fn(*args))
        except BaseException as e:
            return {
                "ok": False,
                "index": index,
                "exc": _exc_info(e, student_dir),
                "todo": isinstance(e, NotImplementedError),
            }
    return {"ok": True, "value": values, "args": calls}


def _handle(frame: bytes, module: ModuleType, handles: _Handles, student_dir: str) -> Any:
    try:
        req = codec.loads(frame, resolve_handle=handles.get, build=_build)
        op = req["op"]
        if op == "getattr":
            return {"ok": True, "value": getattr(req["target"], req["name"])}
        if op == "build":
            return {"ok": True, "value": req["target"]}
        if op == "map":
            return _map(module, req, student_dir)
        if op != "call":
            raise codec.CodecError(f"unknown op {op!r}")
        target, name = req["target"], req["name"]
        if target is None and not callable(getattr(module, name, None)):
            return _missing(name)
        fn = getattr(module, name) if target is None else getattr(target, name)
        args, kwargs = req["args"], req["kwargs"]
    except BaseException as e:
        return {"ok": False, "harness": True, "exc": _exc_info(e, student_dir)}
    counts, restore = _count_calls(module, req.get("count") or [])
    start = time.perf_counter()
    try:
        value = fn(*args, **kwargs)
    except BaseException as e:  # the student's exception, SystemExit included
        restore()
        return {
            "ok": False,
            "exc": _exc_info(e, student_dir),
            "todo": isinstance(e, NotImplementedError),
            "args": list(args),
            "kwargs": kwargs,
        }
    restore()
    return {
        "ok": True,
        "value": value,
        "args": list(args),
        "kwargs": kwargs,
        "seconds": time.perf_counter() - start,
        "counts": counts,
    }


def _count_calls(module: ModuleType, names: list[str]) -> tuple[dict[str, int], Any]:
    """Wrap the student's functions `names` for one call, counting how often each runs.

    Lets a check tell a `roundtrip` that really calls `decode_id` from one that returns
    its input. Returns the live counts and a function that puts the originals back.
    """
    counts = {name: 0 for name in names}
    originals = {
        name: getattr(module, name) for name in names if callable(getattr(module, name, None))
    }

    def wrap(name: str, original: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return original(*args, **kwargs)

        return counted

    for name, original in originals.items():
        setattr(module, name, wrap(name, original))

    def restore() -> None:
        for name, original in originals.items():
            setattr(module, name, original)

    return counts, restore
