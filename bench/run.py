"""Benchmarks, run on demand (`make bench`): medians and ratios, never pass/fail.

What it measures on this machine, for each sandbox backend that runs here (fork: children
forked from a zygote, the default on Linux; spawn: a fresh interpreter per child, the
default on macOS and Windows):
- wall time of `minillm verify LAB --solution` for every lab (what a student waits for),
- wall time of `make test` in labs/lab04 (the student's loop, stubs),
- the sandbox's cost per call (scalar and [64, 64] array arguments) and per session
  (a new child + importing the student module + first call).

Reference point: the C course's `make clean && make test` takes 0.64–1.47 s per lab.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from figures import record  # noqa: E402

from grader.labs import all_labs  # noqa: E402
from grader.sandbox.client import Sandbox  # noqa: E402
from grader.sandbox.launch import fork_usable  # noqa: E402

BACKENDS = ["fork", "spawn"] if fork_usable() else ["spawn"]

RUNS = int(os.environ.get("BENCH_RUNS", "9"))
GOAL_VERIFY_S = 0.5
GOAL_CALL_MS = 2.0
C_COURSE_S = (0.64, 1.47)


def wall(cmd: list[str], cwd: Path = ROOT, backend: str | None = None) -> float:
    env = dict(os.environ)
    if backend is not None:
        env["MINILLM_SANDBOX"] = backend
    start = time.perf_counter()
    subprocess.run(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    return time.perf_counter() - start


def median_of(fn: object, runs: int = RUNS) -> tuple[float, float]:
    samples = [fn() for _ in range(runs)]  # type: ignore[operator]
    return statistics.median(samples), min(samples)


def bench_verify() -> None:
    minillm = [sys.executable, "-m", "grader"]
    print(f"verify --solution, wall time over {RUNS} runs (goal <= {GOAL_VERIFY_S} s):")
    for info in all_labs():
        cells = []
        for backend in BACKENDS:
            cmd = [*minillm, "verify", info.id, "--solution"]
            med, best = median_of(lambda cmd=cmd, b=backend: wall(cmd, backend=b))
            cells.append(f"{backend} median {med:.3f} s  min {best:.3f} s")
            name = f"verify {info.id} --solution ({backend}), wall"
            if backend == BACKENDS[0]:
                record(name, med, "s", f"<= {GOAL_VERIFY_S} s", med <= GOAL_VERIFY_S)
            else:
                record(name, med, "s")
            if backend == BACKENDS[0]:
                ratio = (
                    f"ratio to goal {med / GOAL_VERIFY_S:.2f}  "
                    f"= {med / C_COURSE_S[1]:.2f}–{med / C_COURSE_S[0]:.2f}× the C course's time"
                )
        print(f"  {info.id}: " + "  |  ".join(cells) + f"  ({BACKENDS[0]}: {ratio})")
    make = ["make", "-s", "test"]
    for backend in BACKENDS:
        med, best = median_of(lambda b=backend: wall(make, ROOT / "labs" / "lab04", backend=b))
        print(f"  make test in labs/lab04 (stubs), {backend}: median {med:.3f} s  min {best:.3f} s")
        record(f"make test in labs/lab04 (stubs, {backend}), wall", med, "s")


def bench_sandbox(backend: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        student = Path(tmp) / "student.py"
        student.write_text("def echo(x):\n    return x\n")
        with Sandbox(backend=backend) as sb:
            session = sb.session(str(student))
            session.call("echo", 0)
            arr = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
            for label, arg in (("scalar", 1.5), ("[64, 64] float32", arr)):
                samples = []
                for _ in range(500):
                    start = time.perf_counter()
                    session.call("echo", arg)
                    samples.append(time.perf_counter() - start)
                med = statistics.median(samples) * 1e3
                print(
                    f"  call with {label}: median {med:.3f} ms  "
                    f"ratio to goal {med / GOAL_CALL_MS:.2f}"
                )
                record(f"sandbox call with {label} ({backend})", med, "ms",
                       f"<= {GOAL_CALL_MS} ms", med <= GOAL_CALL_MS)  # fmt: skip
            session.close()
            samples = []
            for _ in range(50 if backend == "fork" else 10):
                start = time.perf_counter()
                s = sb.session(str(student))
                s.call("echo", 0)
                s.close()
                samples.append(time.perf_counter() - start)
            print(
                f"  new session (new child + import + first call): median "
                f"{statistics.median(samples) * 1e3:.2f} ms"
            )
            record(f"sandbox new session ({backend})", statistics.median(samples) * 1e3, "ms")


def main() -> None:
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    bench_verify()
    for backend in BACKENDS:
        print(f"sandbox, {backend} backend:")
        bench_sandbox(backend)


if __name__ == "__main__":
    main()
