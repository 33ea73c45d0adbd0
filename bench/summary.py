"""The one table at the end of `make bench`: every recorded figure, its goal, met or not.

Reads what the bench scripts recorded with `figures.record` (``build/bench/figures.jsonl``)
and prints one aligned row per figure, grouped by the script that measured it, then a
count of goals met. A figure without a goal is shown with "-" (for information).

    .venv/bin/python bench/summary.py           print the table
    .venv/bin/python bench/summary.py --clear   forget the recorded figures (make bench)

Example:
    >>> from figures import Figure
    >>> print(render([Figure("verify lab04, wall", 0.31, "s", "<= 0.5 s", True, "run.py")]))
    figure                value   goal      status
    --------------------  ------  --------  ------
    run.py
      verify lab04, wall  0.31 s  <= 0.5 s  met
    <BLANKLINE>
    1 of 1 goals met
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import Figure, clear, load


def _value(fig: Figure) -> str:
    if fig.unit == "bool":
        return "yes" if fig.value else "no"
    v = fig.value
    text = f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) >= 0.1 else f"{v:.3g}"
    return f"{text} {fig.unit}".strip()


def _status(fig: Figure) -> str:
    return "-" if fig.met is None else "met" if fig.met else "NOT met"


def render(figures: list[Figure]) -> str:
    """The table as text: a header, one row per figure under its script, a count."""
    if not figures:
        return "no figures recorded (run the bench scripts, or make bench)"
    rows = [("  " + f.name, _value(f), f.goal or "-", _status(f)) for f in figures]
    head = ("figure", "value", "goal", "status")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(head), line(tuple("-" * w for w in widths))]
    bench = None
    for fig, row in zip(figures, rows, strict=True):
        if fig.bench != bench:
            bench = fig.bench
            out.append(bench or "(unknown script)")
        out.append(line(row))
    goals = [f for f in figures if f.met is not None]
    out += ["", f"{sum(bool(f.met) for f in goals)} of {len(goals)} goals met"]
    missed = [f.name for f in goals if not f.met]
    if missed:
        out.append("NOT met: " + "; ".join(missed))
    return "\n".join(out)


def main() -> None:
    if "--clear" in sys.argv[1:]:
        clear()
        return
    figures = load()
    by_bench: dict[str, list[Figure]] = {}
    for fig in figures:  # group by script, in the order the scripts ran
        by_bench.setdefault(fig.bench, []).append(fig)
    from machine import machine

    print("\nsummary of make bench (medians; goals from each bench script)")
    print(machine())
    print(render([f for group in by_bench.values() for f in group]))


if __name__ == "__main__":
    main()
