"""Renderers of grading results, one module per format.

`grader.report` renders one verify run (the text report and its JSON); these render a
`BatchResult` of `minillm grade`: `text`, `json_doc` (our JSON), `junit` (JUnit XML, one
testcase per check), `gradescope` (Gradescope's ``results.json``), `github` (a step summary
in Markdown and ``::error`` annotations) and `csv_table` (one row per submission). Every
format carries each submission's score and max score. `FORMATS` maps a ``--format`` name to
its renderer, which returns the file's text.
"""

from __future__ import annotations

from collections.abc import Callable

from grader.grade.result import BatchResult
from grader.render.csv_table import render_csv
from grader.render.github import render_github_log
from grader.render.gradescope import render_gradescope
from grader.render.json_doc import render_batch_json
from grader.render.junit import render_junit
from grader.render.text import render_text

__all__ = ["FORMATS", "Renderer"]

Renderer = Callable[[BatchResult, str], str]

FORMATS: dict[str, Renderer] = {
    "text": render_text,
    "json": render_batch_json,
    "junit": render_junit,
    "gradescope": render_gradescope,
    "github": render_github_log,
    "csv": render_csv,
}
