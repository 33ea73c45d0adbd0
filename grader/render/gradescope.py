"""One submission as Gradescope's ``results.json`` (``--format gradescope``).

Gradescope's autograder reads ``/autograder/results/results.json``; the fields used are the
documented ones: ``score``, ``execution_time``, ``output``, ``visibility``,
``stdout_visibility``, ``test_output_format`` and ``tests``, each test with ``name``,
``number``, ``score``, ``max_score``, ``status`` (``passed``/``failed``), ``output``,
``tags`` and ``visibility``. A test is one `[TEST n]` block (its points are its max score);
a hidden test is ``"after_published"``, so students see it once grades are published, and
the visible ``output`` counts the visible tests only (so it gives no hidden outcome away).
Every text a submission chose (an error, a message, what its code printed) is escaped
(`grader.render.common.one_line`, `block`), as in every format.

A test the grader itself failed (`Status.GRADER`: a bug in verify.py, a request it could not
send) is kept apart from the student's failures, as far as Gradescope's two statuses allow:
it is ``"failed"`` with score 0 (no points are given for a test that did not run properly;
the staff regrade once it is fixed), its ``output`` starts with a line saying it is the
course staff's problem and not the student's, it carries the tag ``grader-error`` (so the
staff can find every such test), and the summary ``output`` counts them.
"""

from __future__ import annotations

import json
from typing import Any

from grader.render.common import block, fmt_points, lab_label, one_line, test_label, test_text
from grader.render.text import isolation_lines
from grader.results import BatchResult, Status, SubmissionResult, TestResult

__all__ = ["GRADER_TAG", "VISIBILITIES", "gradescope_doc", "render_gradescope"]

GRADER_TAG = "grader-error"  # the tag of a test the grader failed (`Status.GRADER`)
_GRADER_NOTE = {
    "zh": "评测器内部错误：这不是你的代码的问题，是课程助教的问题，修好后会重新评分。",
    "en": "grader error: this is not a problem with your code but the course staff's; "
    "it will be regraded once fixed.",
}

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


def _summary(sub: SubmissionResult, batch: BatchResult, lang: str) -> str:
    lines = isolation_lines(batch, lang)
    if sub.error:
        error = one_line(sub.error_in(lang))
        lines.append(("评测出错：" if lang == "zh" else "grading error: ") + error)
    got = most = 0.0
    hidden = False
    for lab in sub.labs:
        shown = [t for t in lab.tests if not t.hidden]  # a hidden outcome shows nowhere here
        hidden = hidden or len(shown) < len(lab.tests)
        score = sum(t.points for t in shown if t.status is Status.PASS)
        top = sum(t.points for t in shown)
        got, most = got + score, most + top
        lines.append(f"{lab_label(lab, lang)}: {fmt_points(score)}/{fmt_points(top)}")
        if lab.import_error is not None:  # why every test of the lab is an ERROR
            text = block(lab.import_error.zh if lang == "zh" else lab.import_error.en)
            lines.append("  " + text.replace("\n", "\n  "))
    label = "公开测试总分: " if lang == "zh" else "visible tests: "
    lines.append(label + f"{fmt_points(got)}/{fmt_points(most)}")
    if hidden:
        lines.append(
            "隐藏测试的结果在成绩发布后显示"
            if lang == "zh"
            else "the hidden tests' results are shown once grades are published"
        )
    broken = sum(1 for lab in sub.labs for t in lab.tests if t.status is Status.GRADER)
    if broken:
        lines.append(
            f"{broken} 个测试因评测器内部错误没有评分（不是你的问题，请告诉助教）"
            if lang == "zh"
            else f"{broken} tests were not graded because of a grader error "
            "(not your code's problem; please tell the staff)"
        )
    if sub.note:
        lines.append(("注意：" if lang == "zh" else "note: ") + one_line(sub.note_in(lang)))
    if sub.seed is not None:
        lines.append(f"seed: {sub.seed}")
    return "\n".join(lines)


def _output(test: TestResult, lang: str) -> str:
    text = test_text(test, lang)
    if test.status is not Status.GRADER:
        return text
    return _GRADER_NOTE["zh" if lang == "zh" else "en"] + "\n" + text


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
            broken = t.status is Status.GRADER
            tests.append(
                {
                    "name": f"{lab.lab} {test_label(t, lang)}",
                    "number": f"{number}.{t.number}",
                    "score": t.points if t.status is Status.PASS else 0.0,
                    "max_score": t.points,
                    "status": "passed" if t.status is Status.PASS else "failed",
                    "output": _output(t, lang),
                    "tags": [lab.lab, GRADER_TAG] if broken else [lab.lab],
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
