"""The text report of a verify run, in the C course's layout.

    ========================================
       Lab04 多头自注意力 — verify
    ========================================

    [TEST 1] attention_scores：单位矩阵与缩放
      [PASS] 输出形状为 [2, 2]
      [FAIL] ...
             期望 ..., 实际 ...

    ========================================
    结果: ...
    ========================================

Colour comes from rich on a terminal; elsewhere (pipes, files, `NO_COLOR`, `--no-color`)
the same characters are printed without escape codes. `render_plain` returns the text
itself, which is what the handouts quote. `render_json` is the same result as the
documented JSON document (`SCHEMA` is its version). Every renderer of a result lives here.

Every text of a result may hold what student code chose (an exception's message, what it
printed): each is escaped (`grader.explain.clean`), so no terminal escape, carriage return,
NUL or bidi override reaches the report, a name is one line, and what the code printed
keeps its line breaks only behind the ``|`` of its block. The JSON keeps the texts as they
are (JSON escapes them itself).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from grader.explain import clean
from grader.i18n import Text
from grader.render.term import asciify, fits
from grader.results import CheckResult, LabResult, Status, TestResult

__all__ = [
    "SCHEMA",
    "print_report",
    "render_json",
    "render_lines",
    "render_plain",
    "render_test_block",
]

SCHEMA = 2  # version of the JSON document; bumped when a field changes meaning

RULE = "=" * 40
_STYLE = {
    Status.PASS: "green",
    Status.FAIL: "red",
    Status.TODO: "yellow",
    Status.ERROR: "bold red",
    Status.TIMEOUT: "bold red",
    Status.SKIP: "dim",
    Status.GRADER: "bold magenta",
}
# How a status reads in a line: a grader error says whose error it is.
_LABEL = {s: f"[{s.value}]" for s in Status} | {Status.GRADER: "[GRADER ERROR]"}
_MAX_MESSAGE_LINES = 24
_MAX_OUTPUT_LINES = 8

Segment = tuple[str, str]  # (text, rich style)
Line = list[Segment]

_WORDS = {
    "todo": Text("未完成", "todo"),
    "failed": Text("失败", "failed"),
    "error": Text("出错", "error"),
    "timeout": Text("超时", "timed out"),
    "skipped": Text("跳过", "skipped"),
    "grader_error": Text("评测器出错（不算你的）", "grader-side, not yours"),
}


def _one_line(text: str) -> str:
    return clean(text, limit=None, one_line=True)


def _message_lines(text: str, indent: str, limit: int) -> list[Line]:
    rows = clean(text, limit=None).splitlines()
    out: list[Line] = [[(indent + r, "")] for r in rows[:limit]]
    if len(rows) > limit:
        out.append([(indent + f"… (+{len(rows) - limit})", "dim")])
    return out


def _output_lines(c: CheckResult, lang: str) -> list[Line]:
    """What the student's code printed: the first lines, and how much was left out."""
    head = "你的代码打印了:" if lang == "zh" else "your code printed:"
    kept = clean(c.output, limit=None).rstrip("\n")
    rows = kept.splitlines()
    lines: list[Line] = [[("         " + head, "dim")]]
    lines += [[("         | " + r, "dim")] for r in rows[:_MAX_OUTPUT_LINES]]
    hidden = len(rows) - _MAX_OUTPUT_LINES
    shown_all = c.output_bytes <= len(c.output.encode("utf-8"))
    if hidden > 0 or not shown_all:
        if lang == "zh":
            more = f"另有 {hidden} 行未显示" if hidden > 0 else ""
            total = "" if shown_all else f"共打印了 {c.output_bytes} 字节，只保留了开头"
            text = "，".join(p for p in (more, total) if p)
        else:
            more = f"{hidden} more lines not shown" if hidden > 0 else ""
            total = (
                "" if shown_all else f"{c.output_bytes} bytes printed in all, only the start kept"
            )
            text = "; ".join(p for p in (more, total) if p)
        lines.append([("         | … (" + text + ")", "dim")])
    return lines


HintCommand = Callable[[int], str]  # test number -> the command that shows its hints


def _in_lab(number: int) -> str:
    return f"make hint T={number}" if number else "make hint"


def _check_lines(
    c: CheckResult,
    lang: str,
    shown: set[str] | None = None,
    number: int = 0,
    hint_for: HintCommand = _in_lab,
) -> list[Line]:
    """One check's lines; a hint already shown in this test (`shown`) is not repeated.
    `number` is the test's, for the command that shows the other hints."""
    lines: list[Line] = [
        [
            ("  ", ""),
            (_LABEL[c.status], _STYLE[c.status]),
            (" " + _one_line(c.name.pick(lang)), ""),
        ]
    ]
    if c.message is not None and c.status is not Status.PASS:
        lines += _message_lines(c.message.pick(lang), "         ", _MAX_MESSAGE_LINES)
    first = c.hints[0].pick(lang) if c.hints else ""
    if c.hints and c.status is not Status.PASS and first not in (shown or set()):
        if shown is not None:
            shown.add(first)
        label = "提示: " if lang == "zh" else "hint: "
        more = ""
        if len(c.hints) > 1:  # `make hint` in the lab's folder, where `make test` runs
            command = hint_for(number)
            more = (
                f"（还有 {len(c.hints) - 1} 条提示：{command}）"
                if lang == "zh"
                else f" ({len(c.hints) - 1} more: {command})"
            )
        text = label + c.hints[0].pick(lang) + more
        lines += [[(row[0][0], "cyan")] for row in _message_lines(text, "         ", 6)]
    if c.diagnosis is not None and c.status is not Status.PASS:
        cause = ("可能的原因：" if lang == "zh" else "likely cause: ") + c.diagnosis.text.pick(lang)
        lines += [[(row[0][0], "yellow")] for row in _message_lines(cause, "         ", 3)]
    if c.output and c.status is not Status.PASS:
        lines += _output_lines(c, lang)
    return lines


def _test_lines(t: TestResult, lang: str, hint_for: HintCommand = _in_lab) -> list[Line]:
    head: Line = [(f"[TEST {t.number}] ", "bold"), (_one_line(t.title.pick(lang)), "bold")]
    if t.status is Status.SKIP:
        reason = _one_line(t.reason.pick(lang)) if t.reason else ""
        return [[*head, ("  ", ""), ("[SKIP]", _STYLE[Status.SKIP]), (" " + reason, "dim")]]
    if not t.checks and t.reason is not None:
        status = (_LABEL[t.status], _STYLE[t.status])
        return [[*head, ("  ", ""), status, (" " + _one_line(t.reason.pick(lang)), "")]]
    lines = [head]
    shown: set[str] = set()
    for c in t.checks:
        lines += _check_lines(c, lang, shown, t.number, hint_for)
    return lines


def _summary(result: LabResult, lang: str) -> Line:
    s = result.summary()
    checks = result.check_counts()
    n_checks = sum(checks.values())
    if result.passed:
        text = (
            f"结果: 全部通过 — {s['total']} 个测试，{n_checks} 项检查"
            if lang == "zh"
            else f"Result: all passed — {s['total']} tests, {n_checks} checks"
        )
        return [(text, "bold green")]
    parts = [f"{n} {_WORDS[k].pick(lang)}" for k, n in s.items() if k in _WORDS and n]
    sep = "，" if lang == "zh" else ", "
    if lang == "zh":
        text = f"结果: {s['passed']}/{s['total']} 个测试通过（{sep.join(parts)}）"
    else:
        text = f"Result: {s['passed']}/{s['total']} tests passed ({sep.join(parts)})"
    if s["failed"] + s["error"] + s["timeout"]:
        return [(text, "bold red")]
    return [(text, _STYLE[Status.GRADER] if s["grader_error"] else "bold yellow")]


def render_lines(result: LabResult, lang: str, hint_for: HintCommand = _in_lab) -> list[Line]:
    """The report as styled lines; `hint_for(n)` spells the command that shows test n's
    other hints (default: ``make hint T=n``, as typed in the lab's folder)."""
    title = _one_line(f"{result.lab.capitalize()} {result.title.pick(lang)} — verify")
    lines: list[Line] = [[(RULE, "bold")], [("   " + title, "bold")], [(RULE, "bold")], []]
    if result.import_error is not None:
        lines.append(
            [
                ("[ERROR] ", "bold red"),
                ("无法导入你的代码:" if lang == "zh" else "cannot import your code:", "bold"),
            ]
        )
        lines += _message_lines(result.import_error.pick(lang), "  ", _MAX_MESSAGE_LINES)
        lines.append([])
    for note in result.notes:
        lines += [[(_one_line(note.pick(lang)), "dim")], []]
    for t in result.tests:
        lines += _test_lines(t, lang, hint_for)
        lines.append([])
    lines += [[(RULE, "bold")], _summary(result, lang), [(RULE, "bold")]]
    return lines


def render_test_block(test: TestResult, lang: str) -> list[Line]:
    """The lines of one `[TEST n]` block, as in the full report (for the pytest plugin)."""
    return _test_lines(test, lang)


def render_json(result: LabResult, lang: str) -> dict[str, Any]:
    """The documented JSON result (README), texts in `lang` plus both titles."""
    tests = []
    for t in result.tests:
        entry: dict[str, Any] = {
            "id": t.id,
            "title": t.title.pick(lang),
            "titles": {"zh": t.title.zh, "en": t.title.en},
            "status": t.status.value,
            "points": t.points,
            "hidden": t.hidden,
            "checks": [_check_json(c, lang) for c in t.checks],
        }
        if t.reason is not None:
            entry["reason"] = t.reason.pick(lang)
        tests.append(entry)
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "lab": result.lab,
        "title": result.title.pick(lang),
        "titles": {"zh": result.title.zh, "en": result.title.en},
        "lang": lang,
        "impl": result.impl,
        "sandbox": result.sandbox,
        "seed": result.seed,
        "duration_s": round(result.seconds, 4),
        "score": result.score,
        "max_score": result.max_score,
        "summary": result.summary(),
        "notes": [n.pick(lang) for n in result.notes],
        "tests": tests,
    }
    if result.import_error is not None:
        doc["import_error"] = result.import_error.pick(lang)
    return doc


def _check_json(c: CheckResult, lang: str) -> dict[str, Any]:
    return {
        "name": c.name.pick(lang),
        "status": c.status.value,
        "message": c.message.pick(lang) if c.message else "",
        "output": c.output,
        "output_bytes": c.output_bytes,
        "hints": [h.pick(lang) for h in c.hints],
        "diagnosis": (
            {"bug": c.diagnosis.bug, "zh": c.diagnosis.text.zh, "en": c.diagnosis.text.en}
            if c.diagnosis is not None
            else None
        ),
    }


def render_plain(result: LabResult, lang: str, hint_for: HintCommand = _in_lab) -> str:
    """The report as plain text (no colour), newline-terminated."""
    lines = render_lines(result, lang, hint_for)
    return "".join("".join(seg for seg, _ in line) + "\n" for line in lines)


def print_report(
    result: LabResult,
    lang: str,
    *,
    color: bool | None = None,
    file: TextIO | None = None,
    hint_for: HintCommand = _in_lab,
) -> None:
    """Print the report; colour on a terminal unless `color` is False or NO_COLOR is set."""
    stream = file or sys.stdout
    if color is False or os.environ.get("NO_COLOR") or not stream.isatty():
        text = render_plain(result, lang, hint_for)
        if not fits(stream, text):
            text = asciify(text)  # a legacy code page: '->' rather than '?'
        stream.write(text)
        stream.flush()
        return
    from rich.console import Console
    from rich.text import Text as RichText

    console = Console(file=stream, highlight=False, soft_wrap=True)
    for line in render_lines(result, lang, hint_for):
        rt = RichText()
        for seg, style in line:
            rt.append(seg, style=style or None)
        console.print(rt)
