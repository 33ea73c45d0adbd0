"""A grade for GitHub Actions (``--format github``): a log with annotations, and a summary.

`render_github_log` is what the step prints: the text report between
``::stop-commands::<token>`` and ``::<token>::`` (a random token the student's code cannot
know, so nothing it printed is run as a workflow command), then one ``::error`` annotation
per test that did not pass, at the student's file and line, and a ``::notice`` with the
score. A line of the report that would still look like a command (``::``, ``##[``) is
defused as well. `render_github_summary` is the Markdown for ``$GITHUB_STEP_SUMMARY``: the
score, a table of the labs, and each test that did not pass with its report lines in a
code block. Every text a submission chose (its name, what its code printed, a message) is
escaped first (`grader.render.common.one_line`, `block`): no terminal escape or carriage
return reaches the log, where it could redraw a line, nor the summary.

Where an annotation points: the innermost frame of the student's file when the check
raised or timed out (``student.py:12 in softmax``), else the ``def`` of the first student
function that the test names, else the file's first line.
"""

from __future__ import annotations

import html
import re
import secrets

from grader.render.common import block, fmt_points, lab_label, one_line, test_label, test_text
from grader.render.text import NOT_ISOLATED, render_text
from grader.results import BatchResult, LabResult, Status, SubmissionResult, TestResult

__all__ = [
    "MAX_ANNOTATIONS",
    "annotation_line",
    "defuse",
    "render_github_log",
    "render_github_summary",
]

MAX_ANNOTATIONS = 10  # GitHub shows at most 10 error annotations per step
MAX_MESSAGE = 4000  # characters of one annotation's message
_COMMAND = re.compile(r"^(\s*)(::|##\[)")
_FRAME = re.compile(r"^\s*student\.py:(\d+) in ", re.MULTILINE)
_IMPORT_LINE = re.compile(r"student\.py:(\d+)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def defuse(text: str) -> str:
    """Each line that GitHub could read as a workflow command, with its marker broken."""
    return "\n".join(
        _COMMAND.sub(lambda m: m.group(1) + m.group(2)[0] + "\u2060" + m.group(2)[1:], line)
        for line in text.split("\n")
    )


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation_line(
    level: str, message: str, *, file: str = "", line: int = 0, title: str = ""
) -> str:
    """One workflow command, its message and properties escaped as the Actions toolkit does."""
    props = []
    if file:
        props.append(f"file={_prop(file)}")
    if line > 0:
        props.append(f"line={line}")
    if title:
        props.append(f"title={_prop(title)}")
    return f"::{level}{' ' + ','.join(props) if props else ''}::{_data(message)}"


def _line(sub: SubmissionResult, lab: LabResult, test: TestResult) -> int:
    for c in test.checks:
        if c.status in (Status.ERROR, Status.TIMEOUT) and c.message is not None:
            frames = _FRAME.findall(c.message.en)
            if frames:
                return int(frames[-1])
    defs = sub.functions.get(lab.lab, {})
    words = _WORD.findall(" ".join([test.title.en, *(c.name.en for c in test.checks)]))
    for word in words:
        if word in defs:
            return defs[word]
    return 1


def _import_line(text: str) -> int:
    """The line of student.py an import error names (1 when it names none)."""
    found = _IMPORT_LINE.findall(text)
    return int(found[-1]) if found else 1


def _annotations(sub: SubmissionResult, lang: str) -> list[str]:
    out: list[str] = []
    name = one_line(sub.name)
    if sub.error:
        error = one_line(sub.error_in(lang))
        out.append(annotation_line("error", error, title=f"minillm grade: {name}"))
    for lab in sub.labs:  # one annotation where the file breaks, not one per test
        if lab.import_error is not None:
            text = block(lab.import_error.zh if lang == "zh" else lab.import_error.en)
            out.append(
                annotation_line(
                    "error",
                    text[:MAX_MESSAGE],
                    file=one_line(sub.files.get(lab.lab, f"labs/{lab.lab}/student.py")),
                    line=_import_line(lab.import_error.en),
                    title=f"{lab.lab}: student.py does not import",
                )
            )
    failing = [
        (lab, t)
        for lab in sub.labs
        if lab.import_error is None
        for t in lab.tests
        if t.status not in (Status.PASS, Status.SKIP)
    ]
    for lab, test in failing[:MAX_ANNOTATIONS]:
        file = one_line(sub.files.get(lab.lab, f"labs/{lab.lab}/student.py"))
        out.append(
            annotation_line(
                "error",
                test_text(test, lang)[:MAX_MESSAGE],
                file=file,
                line=_line(sub, lab, test),
                title=f"{lab.lab} {test_label(test, lang)}: {test.status.value}",
            )
        )
    score = f"{fmt_points(sub.score)}/{fmt_points(sub.max_score)}"
    label = "得分" if lang == "zh" else "score"
    out.append(annotation_line("notice", f"{label} {score}", title=f"minillm grade: {name}"))
    return out


def render_github_log(batch: BatchResult, lang: str, token: str | None = None) -> str:
    """What the Actions step prints (see the module docstring)."""
    token = token or secrets.token_hex(16)
    lines = []
    if not batch.isolated:
        lines.append(annotation_line("warning", NOT_ISOLATED[lang], title="minillm grade"))
    lines.append(f"::stop-commands::{token}")
    lines.append(defuse(render_text(batch, lang)).rstrip("\n"))
    lines.append(f"::{token}::")
    for sub in batch.submissions:
        lines += _annotations(sub, lang)
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return html.escape(block(text)).replace("|", "&#124;").replace("\n", "<br>")


def _fenced(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def render_github_summary(batch: BatchResult, lang: str) -> str:
    """The step summary in Markdown (student text only inside code blocks or escaped)."""
    zh = lang == "zh"
    out: list[str] = []
    if not batch.isolated:
        out += [f"> **{_cell(NOT_ISOLATED[lang])}**", ""]
    for sub in batch.submissions:
        score = f"{fmt_points(sub.score)}/{fmt_points(sub.max_score)}"
        out += [f"## miniLLM — {_cell(one_line(sub.name))}: {score}", ""]
        if sub.error:
            label = "评测出错" if zh else "grading error"
            out += [f"**{label}:** {_cell(one_line(sub.error_in(lang)))}", ""]
        out += [
            "| lab | "
            + ("得分" if zh else "score")
            + " | "
            + ("通过的测试" if zh else "tests passed")
            + " |",
            "|---|---:|---:|",
        ]
        for lab in sub.labs:
            passed = sum(1 for t in lab.tests if t.status is Status.PASS)
            out.append(
                f"| {_cell(lab_label(lab, lang))} | {fmt_points(lab.score)}/"
                f"{fmt_points(lab.max_score)} | {passed}/{len(lab.tests)} |"
            )
        out.append("")
        for lab in sub.labs:
            for test in lab.tests:
                if test.status is Status.PASS:
                    continue
                head = _cell(f"{lab.lab} {test_label(test, lang)}: {test.status.value}")
                out += [
                    f"<details><summary>{head}</summary>",
                    "",
                    _fenced(test_text(test, lang)),
                    "",
                    "</details>",
                ]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
