"""Renderers of results, one module per format.

`lab` renders one verify run (the text report and its JSON) and `term` adapts text to the
terminal it goes to; `classreport` is the self-contained HTML page about a whole class.
The others render a `BatchResult` of `minillm grade`: `text`, `json_doc` (our JSON),
`junit` (JUnit XML, one testcase per check), `gradescope` (Gradescope's ``results.json``),
`github` (a step summary in Markdown and ``::error`` annotations) and `csv_table` (one row
per submission). Every format carries each submission's score and max score. `formats()`
maps a ``--format`` name to its renderer, which returns the file's text; it imports them
when asked, so that a verify run, which needs `lab` only, loads none of them.
"""

from __future__ import annotations

from collections.abc import Callable

from grader.results import BatchResult

__all__ = ["Renderer", "formats"]

Renderer = Callable[[BatchResult, str], str]


def formats() -> dict[str, Renderer]:
    """``--format`` name → renderer."""
    from grader.render.csv_table import render_csv
    from grader.render.github import render_github_log
    from grader.render.gradebook import render_gradebook
    from grader.render.gradescope import render_gradescope
    from grader.render.json_doc import render_batch_json
    from grader.render.junit import render_junit
    from grader.render.text import render_text

    return {
        "text": render_text,
        "json": render_batch_json,
        "junit": render_junit,
        "gradescope": render_gradescope,
        "github": render_github_log,
        "csv": render_csv,
        "gradebook": render_gradebook,
    }
