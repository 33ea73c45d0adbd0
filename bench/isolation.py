"""What isolation costs (`make bench`): medians and differences, never pass/fail.

On this machine, for one lab (lab04, the reference solution):
- `minillm verify lab04 --solution` next to the same with `--isolated` (the student's own
  run, and the same run under bubblewrap as grading does it): wall time and CPU time of the
  whole process tree, runs interleaved so that both see the same load;
- `minillm grade` of one submission with and without `--no-isolation`;
- bubblewrap's own start: `bwrap ... true` with the namespaces grading uses.

Goal: `--isolated` costs under 0.1 s more than the plain run. Skips what needs bubblewrap
where it cannot run (the reason is printed).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from figures import record  # noqa: E402

from grader.sandbox.bwrap import namespaces, unavailable  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "9"))
GOAL_EXTRA_S = 0.1


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and everything it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def compare(label: str, plain: list[str], isolated: list[str]) -> None:
    samples: dict[str, list[tuple[float, float]]] = {"plain": [], "isolated": []}
    timed(plain)  # warm the page cache for both
    timed(isolated)
    for _ in range(RUNS):
        samples["plain"].append(timed(plain))
        samples["isolated"].append(timed(isolated))
    print(f"{label}, {RUNS} interleaved runs:")
    med: dict[str, tuple[float, float]] = {}
    for name, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        med[name] = (wall, cpu)
        print(
            f"  {name:9s} wall {wall:6.3f} s (min {min(w for w, _ in runs):.3f})  cpu {cpu:.3f} s"
        )
    extra = med["isolated"][0] - med["plain"][0]
    extra_cpu = med["isolated"][1] - med["plain"][1]
    verdict = "within" if extra < GOAL_EXTRA_S else "over"
    record(f"{label}: isolation extra, wall", extra, "s", f"< {GOAL_EXTRA_S} s",
           extra < GOAL_EXTRA_S)  # fmt: skip
    print(
        f"  isolation adds {extra:+.3f} s wall, {extra_cpu:+.3f} s cpu "
        f"({verdict} the {GOAL_EXTRA_S} s goal)"
    )


def main() -> None:
    problem = unavailable()
    if problem:
        print(f"isolation bench skipped: {problem}")
        return
    minillm = [sys.executable, "-m", "grader"]
    bwrap = shutil.which("bwrap") or "bwrap"
    start = [bwrap, *namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"]
    walls = [timed(start)[0] for _ in range(RUNS)]
    print(f"bwrap start (namespaces, /proc, exec true): median {statistics.median(walls):.3f} s")
    verify = [*minillm, "verify", "lab04", "--solution"]
    compare("verify lab04 --solution", verify, [*verify, "--isolated"])
    with tempfile.TemporaryDirectory(prefix="minillm-bench-") as tmp:
        sub = Path(tmp) / "submission" / "labs" / "lab04"
        sub.mkdir(parents=True)
        shutil.copyfile(ROOT / "solutions" / "lab04" / "student.py", sub / "student.py")
        grade = [*minillm, "grade", str(sub.parent.parent), "--labs", "lab04"]
        compare("grade one submission, lab04", [*grade, "--no-isolation"], grade)


if __name__ == "__main__":
    main()
