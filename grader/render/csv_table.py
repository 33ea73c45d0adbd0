"""A batch as CSV (``--format csv``): one row per submission, one column per lab, the total.

    submission,lab04,lab07,total,max_score,error
    alice,15,13,28,28,
    bob,14,0,14,28,the grader's worker for this submission ran out of time
    carol,9,,,28,grading was stopped (SIGTERM) before this submission was finished

A submission the run did not finish (it was stopped, or the file was written while it
ran) has no total, so a gradebook import cannot take its partial points for a grade.

Cells that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``,
tab or CR) get a leading apostrophe: submission names and error texts come from outside.
"""

from __future__ import annotations

import csv
import io

from grader.grade.result import BatchResult
from grader.render.common import fmt_points

__all__ = ["render_csv"]


def _cell(text: str) -> str:
    text = text.replace("\r", " ").replace("\n", " ")
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t") else text


def render_csv(batch: BatchResult, lang: str) -> str:
    """The table as CSV text (`lang`: the language of the error column)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["submission", *batch.labs, "total", "max_score", "error"])
    for sub in batch.submissions:
        scores = []
        for lab_id in batch.labs:
            lab = sub.lab(lab_id)
            scores.append(fmt_points(lab.score) if lab is not None else "")
        writer.writerow(
            [
                _cell(sub.name),
                *scores,
                fmt_points(sub.score) if sub.done and not sub.cut else "",
                fmt_points(sub.max_score),
                _cell(sub.error_in(lang)),
            ]
        )
    return out.getvalue()
