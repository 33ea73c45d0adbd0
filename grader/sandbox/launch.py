"""Start the zygote with nothing but the standard library imported.

The zygote needs ~0.2 s to import numpy and the framework. `prestart()` launches it at the
very beginning of a `minillm verify` run, so that it warms up while the grader's own process
imports its modules; `Sandbox.start()` then adopts it (`take_prestarted`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

__all__ = ["Zygote", "launch", "prestart", "take_prestarted"]

Zygote = tuple["subprocess.Popen[bytes]", socket.socket]
_prestarted: Zygote | None = None


def launch() -> Zygote:
    """Start a zygote process; returns it with the grader's end of its control socket."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = dict(os.environ)
    env.update(
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        PYTHONIOENCODING="utf-8",
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.sandbox.zygote", str(child.fileno())],
        pass_fds=(child.fileno(),),
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=root,
    )
    child.close()
    return proc, parent


def prestart() -> None:
    """Launch a zygote now, for the next `Sandbox.start()` in this process to adopt."""
    global _prestarted
    if _prestarted is None:
        _prestarted = launch()


def take_prestarted() -> Zygote | None:
    """The zygote from `prestart()`, once; None if there is none."""
    global _prestarted
    zygote, _prestarted = _prestarted, None
    return zygote
