"""A batch as CSV (``--format csv``): one row per submission, a score and a max column per
lab, the total.

    "submission","student_id","lab04","lab04_max","lab07","lab07_max","total","max_score","did_not_import","error"
    "alice","s001",15,15,13,13,28,28,"",""
    "bob","",14,15,0,13,14,28,"lab07",""
    "carol","s003",9,15,"",13,"",28,"","grading was stopped (SIGTERM) before this ..."

``student_id`` is the roster's (``--roster``; empty without one). ``did_not_import`` lists
the labs whose ``student.py`` did not import (``lab04;lab07``), so a 0 there reads as
"did not run", not "ran and failed". A lab's max is its full marks, also when the
submission has no result for it.

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
    lab_max: dict[str, float] = {}
    for sub in batch.submissions:
        for done in sub.labs:
            lab_max.setdefault(done.lab, done.max_score)
    header = ["submission", "student_id"]
    for lab_id in batch.labs:
        header += [lab_id, f"{lab_id}_max"]
    writer.writerow([*header, "total", "max_score", "did_not_import", "error"])
    for sub in batch.submissions:
        scores: list[str | int | float] = []
        for lab_id in batch.labs:
            lab = sub.lab(lab_id)
            scores.append(number(lab.score) if lab is not None else "")
            top = lab.max_score if lab is not None else lab_max.get(lab_id)
            scores.append(number(top) if top is not None else "")
        no_import = [r.lab for r in map(sub.lab, batch.labs) if r and r.import_error is not None]
        writer.writerow(
            [
                cell(sub.name),
                cell(sub.student_id),
                *scores,
                number(sub.score) if sub.done and not sub.cut else "",
                number(sub.max_score),
                cell(";".join(no_import)),
                cell(sub.error_in(lang)),
            ]
        )
    return out.getvalue()
