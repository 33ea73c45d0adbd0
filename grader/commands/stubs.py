"""`minillm stubs [LAB ...] [--check]`: write each lab's stub from its reference solution.

The solution marks what the student writes (``# BEGIN SOLUTION: <TODO text>`` …
``# END SOLUTION``); `grader.course.stubs` explains the markers. ``--check`` changes nothing and
fails when a committed stub differs from the generated one.
"""

from __future__ import annotations

import sys

import click

__all__ = ["stubs"]


@click.command()
@click.argument("labs", nargs=-1)
@click.option("--check", is_flag=True, help="Only compare; exit 1 if a stub differs.")
def stubs(labs: tuple[str, ...], check: bool) -> None:
    """Generate labs/LAB/student.py and .stub.py from solutions/LAB/student.py (default: all)."""
    from grader.course.stubs import main

    sys.exit(main([*labs, *(["--check"] if check else [])]))
