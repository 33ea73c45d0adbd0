"""Choose a backend and start its processes, with nothing but the standard library imported.

Two backends run the student's code:

- ``fork``: one zygote process per run imports numpy and the framework once and forks a
  child per student module (about a millisecond each). Used where `os.fork` exists and is
  safe: not on Windows (no fork) nor macOS (fork after numpy's Accelerate is unsafe).
- ``spawn``: every child is a fresh interpreter (`python -m grader.sandbox.child`) that
  connects back over a socket: an inherited AF_UNIX socket where there is one, else a
  127.0.0.1 TCP connection that proves itself with a random token (Windows).

`MINILLM_SANDBOX=fork|spawn` forces one. Starting the first process takes ~0.2 s of imports;
`prestart()` launches it at the very beginning of a `minillm verify` run, so that it warms
up while the grader's own process imports its modules, and the backend then adopts it
(`take_prestarted`).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "BACKENDS",
    "Fresh",
    "Zygote",
    "ZygoteProcess",
    "child_env",
    "choose_backend",
    "launch",
    "prestart",
    "start_fresh",
    "take_prestarted",
]

BACKENDS = ("fork", "spawn")
ENV_VAR = "MINILLM_SANDBOX"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

Zygote = tuple["subprocess.Popen[bytes]", socket.socket]


class ZygoteProcess(Protocol):
    """What the fork backend needs of its zygote's process: a `subprocess.Popen`, or a
    phase's zygote forked by a template (`grader.sandbox.template.PhaseProcess`)."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


def fork_usable() -> bool:
    """Whether the fork backend can run here (fork exists, is safe, has AF_UNIX)."""
    return (
        hasattr(os, "fork")
        and hasattr(socket, "AF_UNIX")
        and hasattr(socket, "send_fds")
        and sys.platform not in ("darwin", "win32")
    )


def choose_backend(requested: str | None = None) -> str:
    """``requested``, else ``$MINILLM_SANDBOX``, else fork where usable and spawn elsewhere.

    Raises:
        ValueError: an unknown backend name, or fork where this OS cannot fork safely.
    """
    name = (requested or os.environ.get(ENV_VAR, "")).strip().lower()
    if not name:
        return "fork" if fork_usable() else "spawn"
    if name not in BACKENDS:
        raise ValueError(f"{ENV_VAR} must be 'fork' or 'spawn', got {name!r}")
    if name == "fork" and not fork_usable():
        raise ValueError(f"the fork sandbox backend is not available on {sys.platform}")
    return name


# What a child's environment keeps of the grader's (anything else, secrets included, is
# dropped): the locale, where the user and the system are, and what Windows needs to start.
_KEEP_ENV = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "SYSTEMROOT",
        "WINDIR",
        "COMSPEC",
        "PATHEXT",
        "USERPROFILE",
        "APPDATA",
        "LOCALAPPDATA",
        "TEMP",
        "TMP",
        "TMPDIR",
        "VIRTUAL_ENV",
        "MINILLM_LANG",
    }
)


def child_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a sandbox process: a few variables of the grader's, and ours."""
    source = dict(os.environ if environ is None else environ)
    env = {k: v for k, v in source.items() if k in _KEEP_ENV or k.startswith("LC_")}
    env.update(
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        PYTHONIOENCODING="utf-8",
        PYTHONPATH=ROOT,
    )
    return env


def launch() -> Zygote:
    """Start a zygote process; returns it with the grader's end of its control socket."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.sandbox.zygote", str(child.fileno())],
        pass_fds=(child.fileno(),),
        env=child_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # not the grader's: nothing can write into its report
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        start_new_session=True,  # the terminal's Ctrl-C is the grader's to handle
    )
    child.close()
    return proc, parent


@dataclass
class Fresh:
    """A fresh interpreter that is importing numpy and the framework (spawn backend).

    Its stdout and stderr are `proc.stdout`. Its socket is `conn` (unix transport), or it
    connects to `listener` and sends `token` first (tcp transport).
    """

    proc: subprocess.Popen[bytes]
    conn: socket.socket | None = None
    listener: socket.socket | None = None
    token: str = ""
    transport: str = field(default="unix")


def start_fresh(transport: str | None = None) -> Fresh:
    """Start `python -m grader.sandbox.child`; `transport` is "unix" or "tcp" (default:
    unix where AF_UNIX and descriptor passing exist, else tcp)."""
    if transport is None:
        transport = "unix" if hasattr(socket, "AF_UNIX") and os.name == "posix" else "tcp"
    cmd = [sys.executable, "-m", "grader.sandbox.child"]
    kwargs: dict[str, object] = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True  # its own process group, ended as one
    else:
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    fresh_conn = listener = None
    token = ""
    if transport == "unix":
        fresh_conn, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        cmd += ["--fd", str(theirs.fileno())]
        kwargs["pass_fds"] = (theirs.fileno(),)
    else:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        token = secrets.token_hex(16)
        cmd += ["--connect", str(listener.getsockname()[1]), "--token", token]
    try:
        proc = subprocess.Popen(
            cmd,
            env=child_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            **kwargs,  # type: ignore[call-overload]
        )
    finally:
        if transport == "unix":
            theirs.close()
    return Fresh(proc, fresh_conn, listener, token, transport)


_prestarted: tuple[str, Zygote | Fresh] | None = None


def prestart() -> None:
    """Start the chosen backend's first process now, for the next sandbox to adopt."""
    global _prestarted
    if _prestarted is not None:
        return
    try:
        backend = choose_backend()
    except ValueError:
        return  # reported when the sandbox is created
    _prestarted = (backend, launch() if backend == "fork" else start_fresh())


def take_prestarted(backend: str) -> Zygote | Fresh | None:
    """The process from `prestart()` if it is of `backend`, once; None otherwise."""
    global _prestarted
    if _prestarted is None or _prestarted[0] != backend:
        return None
    _, proc = _prestarted
    _prestarted = None
    return proc
