"""Benchmark `minillm grade --previous`: a class graded in full, then regraded with nothing
changed, and the ratio of the two wall times (goal: at most 0.1).

Run on demand (`python bench/grade_regrade.py`); prints times, never pass/fail. A class is
BENCH_SUBMISSIONS (default 12) copies of every lab's reference solution, graded with
--jobs BENCH_JOBS (default 2) at BENCH_ISOLATION (auto, bwrap, uid or none; default auto),
through the command as an instructor runs it, so the run's course copy and intake are
inside what is timed. The regrade reads every submission again and hashes its files, but
starts no worker (every lab's file and checks are unchanged).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from figures import record  # noqa: E402

from grader.labs import all_labs  # noqa: E402

ISOLATION = os.environ.get("BENCH_ISOLATION", "auto")
SUBMISSIONS = int(os.environ.get("BENCH_SUBMISSIONS", "12"))
JOBS = int(os.environ.get("BENCH_JOBS", "2"))
GOAL = 0.1


def submission(folder: Path) -> Path:
    for info in all_labs():
        target = folder / "labs" / info.id / "student.py"
        target.parent.mkdir(parents=True)
        shutil.copyfile(info.solution, target)
    return folder


def grade(paths: list[Path], out: Path, *extra: str) -> tuple[float, dict[str, object]]:
    isolation = ["--no-isolation"] if ISOLATION == "none" else ["--isolation", ISOLATION]
    command = [sys.executable, "-m", "grader", "grade", *map(str, paths), "--jobs", str(JOBS)]
    command += ["--format", "json", "--out", str(out), "--seed", "1", *isolation, *extra]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"minillm grade exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    doc: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return seconds, doc


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="minillm-bench-regrade-") as tmp:
        base = Path(tmp)
        one = submission(base / "one")
        paths = [base / "class" / f"s{i:03d}" for i in range(SUBMISSIONS)]
        for path in paths:
            shutil.copytree(one, path)
        full, doc = grade(paths, base / "full.json")
        again, redoc = grade(paths, base / "again.json", "--previous", str(base / "full.json"))
        subs = redoc["submissions"]
        assert isinstance(subs, list)
        reused = sum(1 for s in subs if len(s["reused"]) == len(s["labs"]))
        ratio = again / full
        print(f"isolation: {doc['isolation']}; {SUBMISSIONS} submissions, --jobs {JOBS}")
        print(f"  full run:             {full:.2f} s")
        print(f"  regrade, no change:   {again:.2f} s ({reused} of {len(subs)} merged whole)")
        print(f"  ratio {ratio:.3f} (goal <= {GOAL}: {'met' if ratio <= GOAL else 'NOT met'})")
        record("regrade, nothing changed / full run", ratio, "x", f"<= {GOAL}", ratio <= GOAL)
        for s in subs:
            rerun = [lab["lab"] for lab in s["labs"] if lab["lab"] not in s["reused"]]
            if rerun or s["error"]:
                print(f"  {s['name']}: rerun {', '.join(rerun)} {s['error']}".rstrip())


if __name__ == "__main__":
    main()
