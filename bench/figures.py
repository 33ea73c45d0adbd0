"""The figures the benchmarks measure, kept for one summary table at the end of `make bench`.

Each bench script, besides printing its own report, calls `record` for every figure that
has a goal (and a few that are only for information): one JSON line per figure appended
to ``build/bench/figures.jsonl`` (``$BENCH_FIGURES`` overrides the path). `make bench`
empties the file first (`python bench/summary.py --clear`) and ends with
`python bench/summary.py`, which prints every figure, its goal, and met / NOT met. A
bench run alone appends too, so the table can be printed after any subset; when a figure
was recorded twice, the later line wins.

Not here: any timing; the goals themselves live in each bench script beside the code
that measures them.

Example:
    >>> import os, tempfile
    >>> os.environ["BENCH_FIGURES"] = os.path.join(tempfile.mkdtemp(), "f.jsonl")
    >>> record("train step vs torch, 8x64", 1.31, "x torch", ">= 1.25", True)
    >>> [(f.name, f.met) for f in load()]
    [('train step vs torch, 8x64', True)]
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["Figure", "clear", "figures_path", "load", "record"]


@dataclass(frozen=True)
class Figure:
    """One measured figure."""

    name: str  # what was measured, e.g. "verify lab04 (fork), wall"
    value: float  # the median (or the one measurement)
    unit: str  # "s", "ms", "x", "tokens/s", ...; "bool": value 1 or 0, shown yes / no
    goal: str  # the goal as text, e.g. "<= 0.5 s"; "" when there is none
    met: bool | None  # None: no goal, the figure is for information
    bench: str = ""  # the script that measured it


def figures_path() -> Path:
    """Where the figures go: $BENCH_FIGURES, else build/bench/figures.jsonl."""
    env = os.environ.get("BENCH_FIGURES")
    return Path(env) if env else ROOT / "build" / "bench" / "figures.jsonl"


def record(name: str, value: float, unit: str, goal: str = "", met: bool | None = None) -> None:
    """Append one figure (the calling script's name is stored with it)."""
    import sys

    path = figures_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = Figure(name, float(value), unit, goal, None if met is None else bool(met),
                 Path(sys.argv[0]).name)  # fmt: skip
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(asdict(fig)) + "\n")


def clear() -> None:
    """Forget every recorded figure (the start of a `make bench`)."""
    figures_path().unlink(missing_ok=True)


def load(path: Path | None = None) -> list[Figure]:
    """The recorded figures in order, the last line of each name only; bad lines skipped."""
    path = path or figures_path()
    if not path.is_file():
        return []
    latest: dict[str, Figure] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            fig = Figure(**json.loads(line))
        except (ValueError, TypeError):
            continue
        latest.pop(fig.name, None)  # a re-measured figure moves to where it was measured last
        latest[fig.name] = fig
    return list(latest.values())
