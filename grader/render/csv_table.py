"""A batch as CSV (``--format csv``): one row per submission, one column per lab, the total.

    "submission","lab04","lab07","total","max_score","error"
    "alice",15,13,28,28,""
    "bob",14,0,14,28,"the grader's worker for this submission ran out of time"
    "carol",9,"","",28,"grading was stopped (SIGTERM) before this submission was finished"

A submission the run did not finish (it was stopped, or the file was written while it
ran) has no total, so a gradebook import cannot take its partial points for a grade.

Submission names and error texts come from outside, so every text cell is quoted and
escaped to one line (`grader.render.common.one_line`: no control character stays raw), and
a spreadsheet cannot run any part of one as a formula: an apostrophe goes before the
start of the cell, and after each ``,`` ``;`` tab or ``|`` inside it (a separator in some
locale or program), when what follows starts with ``=``, ``+``, ``-``, ``@``, tab or CR
(``x;=1+1`` becomes ``x;'=1+1``). Numbers are the only cells without quotes.
"""

from __future__ import annotations

import csv
import io
import re

from grader.render.common import one_line
from grader.results import BatchResult

__all__ = ["cell", "number", "render_csv"]

# The start of the cell or a separator, any blanks, then a character that starts a formula.
_FORMULA = re.compile(r"(^|[,;\t|])(?=[ \t]*[=+\-@\t\r])")


def cell(text: str) -> str:
    """`text` as one line that no spreadsheet runs as a formula (the module docstring)."""
    return _FORMULA.sub(r"\1'", one_line(text))


def number(x: float) -> int | float:
    """7.0 → 7, 7.5 → 7.5: written without quotes, as a number."""
    return int(x) if float(x).is_integer() else float(x)


def render_csv(batch: BatchResult, lang: str) -> str:
    """The table as CSV text (`lang`: the language of the error column)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    writer.writerow(["submission", *batch.labs, "total", "max_score", "error"])
    for sub in batch.submissions:
        scores: list[str | int | float] = []
        for lab_id in batch.labs:
            lab = sub.lab(lab_id)
            scores.append(number(lab.score) if lab is not None else "")
        writer.writerow(
            [
                cell(sub.name),
                *scores,
                number(sub.score) if sub.done and not sub.cut else "",
                number(sub.max_score),
                cell(sub.error_in(lang)),
            ]
        )
    return out.getvalue()
