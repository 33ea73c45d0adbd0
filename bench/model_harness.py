"""Shared plumbing of the model benchmarks (bench/model_forward.py, model_train_step.py).

- `threads_from_argv()` must run before numpy or torch is imported: it pins numpy's BLAS
  and torch to the same thread count (`--threads N`, default 1; a shared 2-core machine
  makes multi-threaded BLAS spin and the numbers meaningless).
- `interleaved()` times several functions in alternation, so that a load spike from other
  processes hits both sides alike, and reports wall-clock medians (what a user waits for)
  and CPU-time medians of this process (what the work costs, less sensitive to load).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def threads_from_argv() -> int:
    """Read `--threads N` from sys.argv and export it to every BLAS/OpenMP runtime."""
    n = 1
    if "--threads" in sys.argv:
        n = int(sys.argv[sys.argv.index("--threads") + 1])
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    return n


def import_torch() -> Any:
    """torch with its thread count set, or exit(0) with a note when it is not installed."""
    try:
        import torch
    except ImportError:
        print("torch is not installed: pip install -e '.[parity]' to compare with PyTorch")
        raise SystemExit(0) from None
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    return torch


def runs_from_argv(default: int) -> int:
    """`--runs N` (timed calls per function), else `default`."""
    if "--runs" in sys.argv:
        return int(sys.argv[sys.argv.index("--runs") + 1])
    return default


def interleaved(
    fns: dict[str, Callable[[], object]], runs: int, warmup: int = 5
) -> dict[str, tuple[float, float]]:
    """Median (wall ms, CPU ms) of each function, called in alternation `runs` times."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    wall: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            wall[name].append((time.perf_counter() - t0) * 1e3)
            cpu[name].append((time.process_time() - c0) * 1e3)
    return {n: (statistics.median(wall[n]), statistics.median(cpu[n])) for n in fns}


def describe(threads: int, runs: int) -> str:
    """Two lines about the conditions of the run: the interpreter, load and threads, then
    the machine (`machine.machine`: the CPU and the BLAS of numpy and of torch)."""
    from machine import machine

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load:.1f}, "
        f"{threads} thread(s) for numpy and torch, {runs} interleaved runs, medians\n" + machine()
    )
