"""A gradebook to import into Canvas or Moodle (``--format gradebook --roster roster.csv``,
``--gradebook-style canvas|moodle``): one row per roster student, in the batch's order.

Canvas (the default), as Canvas exports its gradebook, with a ``Points Possible`` row::

    "Student","ID","SIS User ID","Section","lab04","lab07","Late Penalty","Final Points","Notes"
    "Points Possible","","","",15,13,0,28,""
    "Ada Lovelace","","s001","A",15,13,0,28,""
    "Alan Turing","","s002","A",15,9,-4.8,19.2,"late 2 days: -20% (-4.8 points)"
    "Grace Hopper","","s003","B",0,0,0,0,"no submission"

Canvas matches a row by ``SIS User ID`` (the roster's id; ``ID``, Canvas's own number, is
left empty). Each lab column, and ``Late Penalty`` (0 or a negative number of points, so
that Canvas's sum is the grade), becomes an assignment (a new one unless the header names
an existing one as Canvas writes it, ``lab04 (12345)``); ``Final Points`` is one of the
columns Canvas reads as its own total and ignores on import; ``Notes`` fills Canvas's
Notes column where the course shows it.

Moodle (``--gradebook-style moodle``)::

    "ID number","Email address","Full name","lab04","lab04 (max)",...,"Late penalty",
    "Total","Total (max)","Notes"

Moodle's CSV import matches users by ``ID number`` or ``Email address`` and maps each
column to a grade item; the ``(max)`` and other columns are left unmapped (Moodle keeps
the maxima in its grade items).

Lab points are what the checks gave, before the late penalty; the total is net of it. A
lab whose student.py does not import says so in Notes (``lab04 did not import``), as does
a student with no submission (0 points) or a submission with an error. A submission not
on the roster is not in the gradebook (``minillm grade`` warns about it; every other
format shows it). A submission not graded to the end (a stopped run) has empty cells, so
that no partial score is imported as a grade. Every text cell is one line and defused
against formulas (`grader.render.csv_table.cell`).
"""

from __future__ import annotations

import csv
import io

from grader.render.csv_table import cell, number
from grader.results import BatchResult, SubmissionResult

__all__ = ["STYLES", "render_gradebook"]

STYLES = ("canvas", "moodle")


def _notes(sub: SubmissionResult, lang: str) -> str:
    notes: list[str] = []
    if sub.error:
        notes.append(sub.error_in(lang))
    notes += [f"{lab.lab} did not import" for lab in sub.labs if lab.import_error is not None]
    if sub.late:
        pct = f"{sub.penalty * 100:g}"
        days = f"{sub.days_late} day{'s' if sub.days_late != 1 else ''}"
        notes.append(f"late {days}: -{pct}% (-{number(sub.penalty_points)} points)")
    elif sub.late_commits:
        notes.append(
            f"{sub.late_commits} commit(s) after the deadline not graded, the newest "
            f"{sub.newest_late}"
        )
    return "; ".join(n for n in notes if n)


def _cells(batch: BatchResult, sub: SubmissionResult, moodle: bool) -> list[str | int | float]:
    """The lab, penalty and total cells of one student ("" where the run did not finish)."""
    final = sub.done and not sub.cut
    out: list[str | int | float] = []
    for lab_id in batch.labs:
        lab = sub.lab(lab_id)
        out.append(number(lab.score) if lab is not None and final else "")
        if moodle:
            out.append(number(lab.max_score) if lab is not None else "")
    out.append(number(-sub.penalty_points) if final else "")
    out.append(number(sub.score) if final else "")
    if moodle:
        out.append(number(sub.max_score))
    return out


def render_gradebook(batch: BatchResult, lang: str, style: str = "canvas") -> str:
    """The gradebook as CSV text (see the module docstring).

    Raises:
        ValueError: `style` is not one of `STYLES`.
    """
    if style not in STYLES:
        raise ValueError(f"invalid gradebook style {style!r}: expected one of {STYLES}")
    moodle = style == "moodle"
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    rows = [s for s in batch.submissions if s.on_roster is not False]
    if moodle:
        labs = [h for lab in batch.labs for h in (lab, f"{lab} (max)")]
        tail = ["Late penalty", "Total", "Total (max)", "Notes"]
        writer.writerow(["ID number", "Email address", "Full name", *labs, *tail])
    else:
        tail = ["Late Penalty", "Final Points", "Notes"]
        writer.writerow(["Student", "ID", "SIS User ID", "Section", *batch.labs, *tail])
        maxima = [number(_max(batch, lab)) for lab in batch.labs]
        writer.writerow(["Points Possible", "", "", "", *maxima, 0, number(batch.max_score), ""])
    for sub in rows:
        name = cell(sub.student_name or sub.name)
        if moodle:
            who: list[str | int | float] = [cell(sub.student_id), cell(sub.email), name]
        else:
            who = [name, "", cell(sub.student_id), cell(sub.section)]
        writer.writerow([*who, *_cells(batch, sub, moodle), cell(_notes(sub, lang))])
    return out.getvalue()


def _max(batch: BatchResult, lab_id: str) -> float:
    """A lab's points (every submission has the same)."""
    return max((lab.max_score for s in batch.submissions if (lab := s.lab(lab_id))), default=0.0)
