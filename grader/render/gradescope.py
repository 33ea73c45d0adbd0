"""One submission as Gradescope's ``results.json`` (``--format gradescope``).

Gradescope's autograder reads ``/autograder/results/results.json``; the fields used are the
documented ones: ``score``, ``execution_time``, ``output``, ``visibility``,
``stdout_visibility``, ``test_output_format`` and ``tests``, each test with ``name``,
``number``, ``score``, ``max_score``, ``status`` (``passed``/``failed``), ``output``,
``tags`` and ``visibility``. A test is one `[TEST n]` block (its points are its max score);
a hidden test is ``"after_published"``, so students see it once grades are published.
"""

from __future__ import annotations

import json
from typing import Any

from grader.grade.result import BatchResult, SubmissionResult
from grader.render.common import fmt_points, lab_label, test_label, test_text
from grader.render.text import NOT_ISOLATED
from grader.results import Status

__all__ = ["VISIBILITIES", "gradescope_doc", "render_gradescope"]

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


def _summary(sub: SubmissionResult, batch: BatchResult, lang: str) -> str:
    lines = []
    if not batch.isolated:
        lines.append(NOT_ISOLATED[lang])
    if sub.error:
        lines.append(("评测出错：" if lang == "zh" else "grading error: ") + sub.error_in(lang))
    for lab in sub.labs:
        score = f"{fmt_points(lab.score)}/{fmt_points(lab.max_score)}"
        lines.append(f"{lab_label(lab, lang)}: {score}")
        if lab.import_error is not None:  # why every test of the lab is an ERROR
            text = lab.import_error.zh if lang == "zh" else lab.import_error.en
            lines.append("  " + text.replace("\n", "\n  "))
    total = f"{fmt_points(sub.score)}/{fmt_points(sub.max_score)}"
    lines.append(("总分: " if lang == "zh" else "total: ") + total)
    return "\n".join(lines)


def gradescope_doc(batch: BatchResult, lang: str) -> dict[str, Any]:
    """The results.json document of the batch's one submission.

    Raises:
        ValueError: the batch holds other than one submission.
    """
    if len(batch.submissions) != 1:
        raise ValueError(
            f"the gradescope format is for one submission, got {len(batch.submissions)}"
        )
    sub = batch.submissions[0]
    tests = []
    for lab in sub.labs:
        number = lab.lab.removeprefix("lab").lstrip("0") or "0"
        for t in lab.tests:
            tests.append(
                {
                    "name": f"{lab.lab} {test_label(t, lang)}",
                    "number": f"{number}.{t.number}",
                    "score": t.points if t.status is Status.PASS else 0.0,
                    "max_score": t.points,
                    "status": "passed" if t.status is Status.PASS else "failed",
                    "output": test_text(t, lang),
                    "tags": [lab.lab],
                    "visibility": "after_published" if t.hidden else "visible",
                }
            )
    return {
        "score": sub.score,
        "execution_time": round(sub.seconds, 3),
        "output": _summary(sub, batch, lang),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "test_output_format": "text",
        "tests": tests,
    }


def render_gradescope(batch: BatchResult, lang: str) -> str:
    """The document as text."""
    return json.dumps(gradescope_doc(batch, lang), ensure_ascii=False, indent=2) + "\n"
