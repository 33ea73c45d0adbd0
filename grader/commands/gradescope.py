"""`minillm gradescope-bundle OUT.zip`: a Gradescope autograder built from this course.

    minillm gradescope-bundle lab04.zip --labs lab04     # one assignment per lab
    minillm gradescope-bundle course.zip                 # every lab in one assignment

Upload the zip as the assignment's autograder (base image: Ubuntu 24.04, or 22.04, for
which setup.sh installs Python 3.11). See `grader.grade.bundle` for what it holds. A hidden
module that does not load is refused: its ``file:line:`` problem on stderr, exit status 2,
no zip written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.i18n import LANGS

__all__ = ["gradescope_bundle"]


@click.command("gradescope-bundle")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--labs", "labs_spec", help="Only these labs, e.g. lab04 (default: all).")
@click.option(
    "--lang", type=click.Choice(LANGS), default="zh", show_default=True, help="Results' language."
)
@click.option(
    "--allow-unisolated",
    is_flag=True,
    help="Where bubblewrap cannot run, grade without isolation (student code can then read "
    "the hidden checks) instead of giving score 0 and saying why.",
)
def gradescope_bundle(out: Path, labs_spec: str | None, lang: str, allow_unisolated: bool) -> None:
    """Write OUT.zip: setup.sh, run_autograder and the course with its hidden checks."""
    from grader.grade.bundle import BundleError, build_bundle
    from grader.labs import UnknownLab, all_labs, course_root, instructor_only, resolve_lab

    if why := instructor_only("minillm gradescope-bundle"):
        click.echo(why, err=True)
        sys.exit(2)

    try:
        labs = (
            [resolve_lab(s) for s in labs_spec.replace(" ", ",").split(",") if s]
            if labs_spec
            else all_labs()
        )
    except UnknownLab as e:
        raise click.UsageError(str(e)) from None
    if not out.name.endswith(".zip"):
        raise click.UsageError(f"{out}: the bundle is a .zip file")
    try:
        names = build_bundle(
            course_root(),
            out,
            labs,
            only_labs=bool(labs_spec),
            lang=lang,
            fallback=allow_unisolated,
        )
    except BundleError as e:
        click.echo(f"{e}\n{out}: not built (fix the hidden checks above)", err=True)
        sys.exit(2)
    hidden = sum(1 for n in names if n.endswith("/hidden.py"))
    click.echo(
        f"{out}: {len(names)} files, {len(labs)} lab(s), {hidden} with hidden checks; "
        "upload it as the assignment's autograder"
    )
