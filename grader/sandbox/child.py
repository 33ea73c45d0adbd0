"""A sandbox child in a fresh interpreter (the spawn backend): ``python -m grader.sandbox.child``.

Connects to the grader (an inherited socket ``--fd N``, or ``--connect PORT --token T``
to 127.0.0.1 for systems without AF_UNIX descriptor passing), imports numpy and the
framework while the grader gets ready, says ``{"warm": true}``, then waits for one setup
message (a JSON frame)::

    {"student": path, "mem": bytes, "files": bytes, "open_files": n,
     "cwd": scratch folder, "gen": generation, "traceback": file for stack dumps}

It moves into the scratch folder, applies its limits and serves that student module
(`grader.sandbox.worker.serve`, with sync markers on its output) until the grader closes
the socket. Its stdout and stderr are a pipe the grader drains in a thread.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys


def _connect(args: argparse.Namespace) -> socket.socket:
    if args.fd is not None:
        return socket.socket(fileno=args.fd)
    sock = socket.create_connection(("127.0.0.1", args.connect), timeout=30)
    sock.settimeout(None)
    from grader.sandbox.protocol import send_json

    send_json(sock, {"token": args.token})
    return sock


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m grader.sandbox.child")
    parser.add_argument("--fd", type=int)
    parser.add_argument("--connect", type=int)
    parser.add_argument("--token", default="")
    args = parser.parse_args()
    sock = _connect(args)
    import numpy  # noqa: F401  - warm up before the student module is known

    import framework

    framework.load_all()  # every module, not just the package's lazy names
    from grader.sandbox import worker
    from grader.sandbox.limits import apply_child_limits
    from grader.sandbox.protocol import recv_json, send_json

    send_json(sock, {"warm": True})
    setup = recv_json(sock)
    workdir = str(setup.get("cwd") or "")
    if workdir:
        os.chdir(workdir)  # files the student's code writes land in the run's scratch folder
        os.environ["TMPDIR"] = workdir
        os.environ["TEMP"] = os.environ["TMP"] = workdir
    apply_child_limits(
        int(setup.get("mem") or 0),
        int(setup.get("files") or 0),
        int(setup.get("open_files") or 0),
        int(setup.get("processes") or 0),
        int(setup.get("cpu_seconds") or 0),
        int(setup.get("niceness") or 0),
    )
    worker.serve(
        sock,
        str(setup["student"]),
        gen=int(setup.get("gen") or 0),
        traceback_path=str(setup.get("traceback") or ""),
        import_dump_at=float(setup.get("import_dump_at") or 0.0),
        sync=True,
    )


if __name__ == "__main__":
    try:
        main()
    except (OSError, EOFError, ValueError, KeyboardInterrupt):
        pass  # the grader went away: nothing left to serve
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(0)
