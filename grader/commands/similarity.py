"""`minillm similarity SUBMISSION...`: rank pairs of submissions by how much code they share.

    minillm similarity submissions/* --report sim.html
    minillm similarity alice/ bob.zip carol/ --labs lab04,lab07 --json sim.json --top 5

Submissions are read as ``minillm grade`` reads them (folders, git checkouts, zips; only
``labs/*/student.py``); the method is in `grader.similarity`. A submission (or one lab of
it) that cannot be read is one line on stderr and is left out. The report, the JSON and
the terminal lines are leads for a human, never a verdict, and say so.

Exit status: 0 when the comparison ran (whatever it found), 2 for a usage error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from grader.i18n import LANGS, Lang, default_lang

if TYPE_CHECKING:
    from grader.labs import LabInfo

__all__ = ["similarity"]

_FILE = click.Path(dir_okay=False, path_type=Path)


def _labs(spec: str | None) -> list[LabInfo]:
    from grader.labs import UnknownLab, all_labs, resolve_lab

    if not spec:
        return list(all_labs())
    try:
        found = [resolve_lab(s) for s in spec.replace(" ", ",").split(",") if s]
    except UnknownLab as e:
        raise click.UsageError(str(e)) from None
    return list({info.id: info for info in found}.values())


def _write(path: Path, text: str, what: str) -> None:
    from grader.grade.batch import write_atomic

    try:
        write_atomic(path, text)
    except OSError as e:
        raise click.UsageError(f"cannot write the {what} to {path}: {e}") from None


@click.command()
@click.argument("submissions", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--labs", "labs_spec", help="Labs to compare, e.g. lab04,lab07 (default: all).")
@click.option("--report", type=_FILE, help="Write the HTML report (one self-contained page).")
@click.option("--json", "json_path", type=_FILE, help="Write the ranked pairs as JSON.")
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Pairs shown per lab (report and terminal).",
)
@click.option(
    "--min-score",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Leave out pairs scoring less (report, terminal and JSON).",
)
@click.option("--lang", type=click.Choice(LANGS), default=None, help="Language of the report.")
def similarity(
    submissions: tuple[Path, ...],
    labs_spec: str | None,
    report: Path | None,
    json_path: Path | None,
    top: int,
    min_score: float,
    lang: Lang | None,
) -> None:
    """Rank pairs of SUBMISSION... (folders, git checkouts or zips) by code similarity."""
    from grader.labs import course_root
    from grader.similarity import compare_class, ranked, render_report, text_lines
    from grader.similarity.report import one_line

    labs = _labs(labs_spec)
    if not labs:
        raise click.UsageError(f"no labs to compare in {course_root()}")
    chosen: Lang = lang or default_lang(getattr(sys.stdout, "encoding", None))
    comparison = compare_class(list(submissions), labs)
    skipped = "跳过" if chosen == "zh" else "skipped"
    for problem in comparison.problems:
        click.echo(f"minillm similarity: {skipped} {one_line(problem.pick(chosen))}", err=True)
    for line in text_lines(comparison, chosen, top=top, min_score=min_score):
        click.echo(line)
    if json_path is not None:
        doc = json.dumps(ranked(comparison, min_score), ensure_ascii=False, indent=2)
        _write(json_path, doc + "\n", "JSON")
    if report is not None:
        _write(report, render_report(comparison, chosen, top=top, min_score=min_score), "report")
