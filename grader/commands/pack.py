"""`minillm pack OUT`: write the student edition of the course, then prove it is one.

See `grader.course.pack` for what the edition holds and what is checked. Exit status: 0 when the
edition was written and every check holds; 1 when a check fails (each problem is listed);
2 when OUT is not a new or empty folder outside the course, or when this copy of the course
is itself a student edition (one line says so: only the instructor's course can be packed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

__all__ = ["pack"]


@click.command("pack")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--labs", "labs_spec", help="Only these labs, e.g. lab01,lab02 (default: all).")
def pack(out: Path, labs_spec: str | None) -> None:
    """Write the student edition to OUT (no solutions, no hidden checks) and verify it."""
    from grader.course.pack import PackError
    from grader.course.pack import pack as write_edition
    from grader.labs import UnknownLab, instructor_only, resolve_lab

    if why := instructor_only("minillm pack"):
        click.echo(why, err=True)
        sys.exit(2)
    labs = None
    if labs_spec:
        try:
            labs = [resolve_lab(s) for s in labs_spec.replace(" ", ",").split(",") if s]
        except UnknownLab as e:
            raise click.UsageError(str(e)) from None
    try:
        problems = write_edition(out, labs=labs, say=lambda s: click.echo(s, err=True))
    except PackError as e:
        raise click.UsageError(str(e)) from None
    if problems:
        click.echo(f"the student edition at {out} has {len(problems)} problem(s):", err=True)
        for p in problems:
            click.echo(f"  {p}", err=True)
        sys.exit(1)
    click.echo(f"the student edition is at {out}: every lab runs, every stub is TODO, no solution")
