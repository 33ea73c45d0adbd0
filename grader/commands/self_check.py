"""`minillm self-check [LAB ...] [--only CHECK,...] [--skip CHECK,...]`: the course checks itself.

See `grader.course.selfcheck` for the checks. Prints one line per lab and every problem found;
exit status 0 when there is none, 1 otherwise, 2 for a usage error or a hidden module
(``solutions/labNN/hidden.py``) that does not load, said in one ``file:line:`` line.
"""

from __future__ import annotations

import sys

import click

__all__ = ["self_check"]


def _names(spec: str | None) -> set[str]:
    return {s.strip() for s in (spec or "").split(",") if s.strip()}


@click.command("self-check")
@click.argument("labs", nargs=-1)
@click.option("--only", help="Only these checks (comma-separated).")
@click.option("--skip", help="All checks but these (comma-separated).")
def self_check(labs: tuple[str, ...], only: str | None, skip: str | None) -> None:
    """Check every lab (or LABS): stubs TODO, solutions pass, handouts true, mutants caught."""
    from grader.course.selfcheck import CHECKS, run_self_check
    from grader.grade.checks import hidden_problems
    from grader.labs import UnknownLab, all_labs, instructor_only, resolve_lab

    if why := instructor_only("minillm self-check"):
        click.echo(why, err=True)
        sys.exit(2)

    chosen = _names(only) or set(CHECKS)
    chosen -= _names(skip)
    unknown = (_names(only) | _names(skip)) - set(CHECKS)
    if unknown:
        raise click.UsageError(f"unknown check(s) {sorted(unknown)}; the checks are {CHECKS}")
    try:
        infos = [resolve_lab(n) for n in labs] if labs else all_labs()
    except UnknownLab as e:
        raise click.UsageError(str(e)) from None
    if problems := hidden_problems(infos):
        click.echo("\n".join(problems), err=True)
        sys.exit(2)
    click.echo(f"self-check of {len(infos)} lab(s): {', '.join(c for c in CHECKS if c in chosen)}")
    found = run_self_check(infos, checks=chosen, say=click.echo)
    for finding in found:
        click.echo(str(finding))
    click.echo(f"{len(found)} problem(s)" if found else "the course is sound: no problem found")
    sys.exit(1 if found else 0)
