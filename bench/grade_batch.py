"""Benchmark `minillm grade`: one full submission's wall time, and a class's throughput.

Run on demand (`make bench`, or `python bench/grade_batch.py`); prints medians, never
pass/fail. A submission is every lab's reference solution (every test passes, hidden ones
included, so nothing stops early). Measured through the command, as an instructor runs it:

- one submission, every lab: the wall time of `minillm grade DIR` (goal: under 10 s),
  the median of BENCH_RUNS runs (default 3), and the time of each lab in the last run;
  interleaved with `minillm verify --all --solution`, and the ratio of the two medians
  (goal: at most 1.5, with a fresh sandbox per lab and for the hidden tests);
- fairness: the same submission graded beside a CPU hog (60 busy processes and slow calls)
  with --jobs 2, its full marks and its wall time against its time alone (goal: at most 2x);
- a class: 40 copies (BENCH_SUBMISSIONS) with --jobs 2 (BENCH_JOBS): wall time and
  submissions per minute;
- the same class regraded with --previous and nothing changed, against the full run
  (`bench/grade_regrade.py`; goal: at most 0.1).

The run's scratch folder, course copy and workers are all inside what is timed.
"""

from __future__ import annotations

import json
import os
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

from grader.labs import all_labs  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "3"))
ISOLATION = os.environ.get("BENCH_ISOLATION", "auto")  # auto, bwrap, uid or none
SUBMISSIONS = int(os.environ.get("BENCH_SUBMISSIONS", "40"))
JOBS = int(os.environ.get("BENCH_JOBS", "2"))
GOAL_ONE_S = 10.0


def submission(folder: Path) -> Path:
    for info in all_labs():
        target = folder / "labs" / info.id / "student.py"
        target.parent.mkdir(parents=True)
        shutil.copyfile(info.solution, target)
    return folder


def grade(paths: list[Path], out: Path, jobs: int, *extra: str) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            *map(str, paths),
            "--jobs",
            str(jobs),
            "--format",
            "json",
            "--out",
            str(out),
            *(["--no-isolation"] if ISOLATION == "none" else ["--isolation", ISOLATION]),
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1, 3):  # 3: a submission (the hog) ran out of time
        raise SystemExit(f"minillm grade exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    doc = json.loads(out.read_text(encoding="utf-8"))
    return seconds, doc


def main() -> None:
    labs = all_labs()
    with tempfile.TemporaryDirectory(prefix="minillm-bench-grade-") as tmp:
        base = Path(tmp)
        one = submission(base / "alice")
        times, verifies = [], []
        for n in range(RUNS):
            seconds, doc = grade([one], base / f"one-{n}.json", 1)
            times.append(seconds)
            verifies.append(verify_all())
        (sub,) = doc["submissions"]  # type: ignore[misc]
        median = statistics.median(times)
        print(f"isolation: {doc['isolation']}")
        print(f"one submission, {len(labs)} labs, {sub['max_score']} points:")
        ratio = median / statistics.median(verifies)
        print(
            f"  verify --all --solution median {statistics.median(verifies):.2f} s; "
            f"grade / verify = {ratio:.2f} (goal <= 1.5: {'met' if ratio <= 1.5 else 'NOT met'})"
        )
        record("grade one submission / verify --all --solution", ratio, "x", "<= 1.5",
               ratio <= 1.5)  # fmt: skip
        record("grade one submission, wall", median, "s", f"< {GOAL_ONE_S:g} s",
               median < GOAL_ONE_S)  # fmt: skip
        record("verify --all --solution, wall", statistics.median(verifies), "s")
        print(
            f"  median {median:.2f} s over {RUNS} runs (min {min(times):.2f}, "
            f"max {max(times):.2f}); goal < {GOAL_ONE_S:.0f} s: "
            + ("met" if median < GOAL_ONE_S else "NOT met")
        )
        slow = sorted(sub["labs"], key=lambda lab: -float(lab["duration_s"]))[:3]
        print("  slowest labs: " + ", ".join(f"{x['lab']} {x['duration_s']:.2f} s" for x in slow))
        per_lab = {x["lab"]: float(x["duration_s"]) for x in sub["labs"]}  # of the last run
        print(
            "  every lab (last run): "
            + ", ".join(f"{k[3:]} {v:.2f}" for k, v in per_lab.items())
            + f" s; sum {sum(per_lab.values()):.2f} s"
        )
        fairness(base, one, statistics.median(times))
        copies = [base / "class" / f"s{i:03d}" for i in range(SUBMISSIONS)]
        for path in copies:
            shutil.copytree(one, path)
        seconds, doc = grade(copies, base / "class.json", JOBS)
        subs = doc["submissions"]
        assert isinstance(subs, list) and all(s["score"] == s["max_score"] for s in subs)
        worked = [float(s["seconds"]) for s in subs]
        print(f"a class: {SUBMISSIONS} submissions, --jobs {JOBS}, {os.cpu_count()} CPUs:")
        print(
            f"  {seconds:.1f} s wall, {60 * SUBMISSIONS / seconds:.1f} submissions per minute; "
            f"per submission median {statistics.median(worked):.2f} s "
            f"(ratio to the single run: {statistics.median(worked) / statistics.median(times):.2f})"
        )
        record(f"grade a class of {SUBMISSIONS}, --jobs {JOBS}", 60 * SUBMISSIONS / seconds,
               "submissions/min")  # fmt: skip


def verify_all() -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "grader", "verify", "--all", "--solution"],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    return time.perf_counter() - start


HOG = """
import os as _os, time as _time
for _ in range(60):
    if _os.fork() == 0:
        _os.setsid()
        while True:
            pass
def _slow(*args, **kwargs):
    _time.sleep(4.5)
    raise NotImplementedError
"""


def fairness(base: Path, honest: Path, alone: float) -> None:
    hog = base / "hog"
    for info in all_labs():
        target = hog / "labs" / info.id / "student.py"
        target.parent.mkdir(parents=True)
        target.write_text(HOG, encoding="utf-8")
    _, doc = grade([honest, hog], base / "fair.json", 2, "--timeout", "30")
    first = doc["submissions"][0]  # type: ignore[index]
    mine = float(first["seconds"])
    full = first["score"] == first["max_score"] and not first["error"]
    fair = full and mine <= 2 * alone
    record("grade fairness: honest beside a CPU hog / alone", mine / alone, "x",
           "full marks and <= 2", fair)  # fmt: skip
    print("beside a CPU hog (60 busy processes, slow calls), --jobs 2 --timeout 30:")
    print(
        f"  honest submission {first['score']}/{first['max_score']} in {mine:.2f} s, "
        f"{mine / alone:.2f}x its time alone (goal: full marks and <= 2x: "
        + ("met" if full and mine <= 2 * alone else "NOT met")
        + ")"
    )


if __name__ == "__main__":
    main()
    # then a class regraded with --previous and nothing changed (goal: at most 0.1)
    sys.path.insert(0, str(ROOT / "bench"))
    import grade_regrade

    grade_regrade.main()
