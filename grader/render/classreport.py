"""A class report: one self-contained HTML page about a graded batch (``--report class.html``).

What an instructor reads after grading a class: how the total scores are distributed, how
many students passed each lab (every test of it) and what each lab's mean score is, and
the checks that most students fail, each with its test's title and the most common
failure message, so it is clear what to teach again. Then one row per submission.

The page needs nothing from the network (styles and charts are inline: HTML, CSS and
SVG), so it can be mailed or opened offline. Every text from a submission is escaped: for
HTML, and first as in every format (`grader.render.common.one_line`, `block`), so no control
character or bidi override reaches the page and a name is one line.
A failed check counts once per submission; FAIL, ERROR and TIMEOUT count as failing, while
TODO (not attempted) and SKIP (a prerequisite failed) do not; a lab whose student.py does
not import counts once, as its own line.
"""

from __future__ import annotations

import html
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from grader.grade.result import BatchResult
from grader.i18n import Text
from grader.render.common import block, fmt_points, one_line
from grader.results import Status

__all__ = ["FailingCheck", "failing_checks", "render_class_report"]

_FAILING = (Status.FAIL, Status.ERROR, Status.TIMEOUT)
_IMPORT = Text("student.py 无法导入", "student.py does not import")
_BINS = 10

_WORDS = {
    "zh": {
        "title": "班级报告",
        "subs": "份提交",
        "dist": "总分分布",
        "labs": "各实验通过率",
        "lab": "实验",
        "passed": "全部通过",
        "mean": "平均得分",
        "hard": "最多学生没通过的检查（不算 TODO、SKIP 和没交的实验）",
        "check": "检查",
        "students": "学生",
        "message": "最常见的失败信息",
        "all": "每份提交",
        "name": "提交",
        "total": "总分",
        "error": "错误",
        "none": "没有哪项检查 FAIL、ERROR 或 TIMEOUT（TODO、SKIP 和没交的实验不算）。",
        "stats": "平均 {mean}，中位数 {median}，最低 {low}，最高 {high}（满分 {max}）",
        "iso": "这次评测没有隔离：学生代码以评测者的身份运行。",
    },
    "en": {
        "title": "Class report",
        "subs": "submissions",
        "dist": "Distribution of total scores",
        "labs": "Pass rate per lab",
        "lab": "lab",
        "passed": "passed every test",
        "mean": "mean score",
        "hard": "Checks most students fail (TODO, SKIP and labs not handed in not counted)",
        "check": "check",
        "students": "students",
        "message": "most common failure message",
        "all": "Every submission",
        "name": "submission",
        "total": "total",
        "error": "error",
        "none": "No check is FAIL, ERROR or TIMEOUT for any student (TODO, SKIP and labs not "
        "handed in are not counted).",
        "stats": "mean {mean}, median {median}, lowest {low}, highest {high} (of {max})",
        "iso": "This run was NOT isolated: student code ran as the grader's user.",
    },
}

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC",
sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#1d2330;background:#fff}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:2em;
border-bottom:1px solid #d7dce5;padding-bottom:.3em}.meta{color:#5a6478}
.warn{background:#fff3cd;border:1px solid #e0c36a;padding:.5em .8em;border-radius:4px}
table{border-collapse:collapse;width:100%;font-size:.92em}
th,td{text-align:left;padding:.35em .5em;border-bottom:1px solid #e6e9ef;vertical-align:top}
th{background:#f3f5f9}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.bar{background:#e6e9ef;border-radius:3px;height:.9em;min-width:120px}
.bar>span{display:block;height:100%;background:#3b7be0;border-radius:3px}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:.85em;
background:#f7f8fa;padding:.3em .5em;border-radius:3px;max-height:9em;overflow:auto}
svg text{font-size:11px;fill:#1d2330}
"""


@dataclass
class FailingCheck:
    """A check and the submissions that fail it."""

    lab: str
    test: str
    title: str
    check: str
    count: int = 0
    messages: Counter[str] = field(default_factory=Counter)

    @property
    def message(self) -> str:
        """The most common failure message (its first lines)."""
        return self.messages.most_common(1)[0][0] if self.messages else ""


def failing_checks(batch: BatchResult, lang: str) -> list[FailingCheck]:
    """Every check that fails for some submission, most failed first."""
    found: dict[tuple[str, str, str], FailingCheck] = {}
    for sub in batch.submissions:
        seen: set[tuple[str, str, str]] = set()
        for lab in sub.labs:
            if lab.import_error is not None:
                entry = found.setdefault(
                    (lab.lab, "", ""),
                    FailingCheck(lab.lab, "", _IMPORT.pick(lang), _IMPORT.pick(lang)),
                )
                entry.count += 1
                rows = lab.import_error.pick(lang).strip().splitlines()
                entry.messages["\n".join(rows[-4:])] += 1
                continue
            for test in lab.tests:
                for c in test.checks:
                    if c.status not in _FAILING:
                        continue
                    key = (lab.lab, test.id, c.name.en)
                    entry = found.setdefault(
                        key,
                        FailingCheck(lab.lab, test.id, test.title.pick(lang), c.name.pick(lang)),
                    )
                    if key in seen:
                        continue
                    seen.add(key)
                    entry.count += 1
                    text = c.message.pick(lang) if c.message else c.status.value
                    entry.messages["\n".join(text.strip().splitlines()[:6])] += 1
    return sorted(found.values(), key=lambda f: (-f.count, f.lab, f.test, f.check))


def _e(text: object, *, lines: bool = False) -> str:
    """`text` escaped for HTML, as one line (or with its line breaks, for a ``<pre>``)."""
    s = str(text)
    return html.escape(block(s) if lines else one_line(s), quote=True)


def _histogram(percents: list[float]) -> str:
    """An SVG bar chart of `percents` (0..100) in ten bins."""
    counts = [0] * _BINS
    for p in percents:
        counts[min(_BINS - 1, int(p // (100 / _BINS)))] += 1
    top = max(counts, default=0) or 1
    width, height, pad = 660, 200, 28
    bar_w = (width - 2 * pad) / _BINS
    parts = [
        f'<svg role="img" viewBox="0 0 {width} {height + 40}" width="{width}" '
        f'height="{height + 40}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, n in enumerate(counts):
        h = (height - pad) * n / top
        x = pad + i * bar_w
        y = height - h
        parts.append(
            f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{bar_w - 4:.1f}" height="{h:.1f}" '
            f'fill="#3b7be0"><title>{i * 10}–{(i + 1) * 10}%: {n}</title></rect>'
        )
        if n:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle">{n}</text>'
            )
        parts.append(
            f'<text x="{x + bar_w / 2:.1f}" y="{height + 16}" text-anchor="middle">'
            f"{i * 10}–{(i + 1) * 10}%</text>"
        )
    parts.append(
        f'<line x1="{pad}" y1="{height}" x2="{width - pad}" y2="{height}" stroke="#5a6478"/>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _bar(fraction: float) -> str:
    return f'<div class="bar"><span style="width:{100 * fraction:.1f}%"></span></div>'


def _labs_table(batch: BatchResult, lang: str, w: dict[str, str]) -> list[str]:
    rows = [
        f"<table><tr><th>{w['lab']}</th><th>{w['passed']}</th><th></th><th>{w['mean']}</th></tr>"
    ]
    n = len(batch.submissions) or 1
    for lab_id in batch.labs:
        results = [r for s in batch.submissions if (r := s.lab(lab_id)) is not None]
        passed = sum(1 for r in results if r.passed)
        means = [r.score / r.max_score for r in results if r.max_score]
        mean = statistics.fmean(means) if means else 0.0
        title = results[0].title.pick(lang) if results else ""
        rows.append(
            f"<tr><td>{_e(lab_id)} {_e(title)}</td><td class=n>{passed}/{n} "
            f"({100 * passed / n:.0f}%)</td><td>{_bar(passed / n)}</td>"
            f"<td class=n>{100 * mean:.0f}%</td></tr>"
        )
    rows.append("</table>")
    return rows


def _hard_table(batch: BatchResult, lang: str, w: dict[str, str], limit: int) -> list[str]:
    hard = failing_checks(batch, lang)[:limit]
    if not hard:
        return [f"<p>{w['none']}</p>"]
    n = len(batch.submissions) or 1
    rows = [
        f"<table><tr><th>{w['lab']}</th><th>{w['check']}</th><th class=n>{w['students']}</th>"
        f"<th>{w['message']}</th></tr>"
    ]
    for f in hard:
        what = f"<b>{_e(f.title)}</b>" + (f"<br>{_e(f.check)}" if f.check != f.title else "")
        rows.append(
            f"<tr><td>{_e(f.lab)}</td><td>{what}</td>"
            f"<td class=n>{f.count}/{n} ({100 * f.count / n:.0f}%)</td>"
            f"<td><pre>{_e(f.message, lines=True)}</pre></td></tr>"
        )
    rows.append("</table>")
    return rows


def _submissions_table(batch: BatchResult, w: dict[str, str], lang: str) -> list[str]:
    head = "".join(f"<th class=n>{_e(lab)}</th>" for lab in batch.labs)
    rows = [
        f"<table><tr><th>{w['name']}</th>{head}<th class=n>{w['total']}</th>"
        f"<th>{w['error']}</th></tr>"
    ]
    for sub in sorted(batch.submissions, key=lambda s: (-s.score, s.name)):
        cells = "".join(
            f"<td class=n>{fmt_points(r.score) if (r := sub.lab(lab)) else '-'}</td>"
            for lab in batch.labs
        )
        rows.append(
            f"<tr><td>{_e(sub.name)}</td>{cells}<td class=n>{fmt_points(sub.score)}/"
            f"{fmt_points(sub.max_score)}</td><td>{_e(sub.error_in(lang))}</td></tr>"
        )
    rows.append("</table>")
    return rows


def render_class_report(batch: BatchResult, lang: str, *, limit: int = 15) -> str:
    """The page, as one HTML document (UTF-8, no external resources)."""
    w = _WORDS["en" if lang == "en" else "zh"]
    subs = batch.submissions
    totals = [s.score for s in subs]
    top = batch.max_score
    percents = [100 * t / top if top else 0.0 for t in totals]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(batch.started))
    stats = w["stats"].format(
        mean=fmt_points(round(statistics.fmean(totals), 1)) if totals else "-",
        median=fmt_points(round(statistics.median(totals), 1)) if totals else "-",
        low=fmt_points(min(totals)) if totals else "-",
        high=fmt_points(max(totals)) if totals else "-",
        max=fmt_points(top),
    )
    body = [
        f"<h1>miniLLM — {w['title']}</h1>",
        f"<p class=meta>{_e(when)} · {len(subs)} {w['subs']} · {_e(', '.join(batch.labs))}</p>",
    ]
    if not batch.isolated:
        body.append(f"<p class=warn>{w['iso']}</p>")
    body += [f"<h2>{w['dist']}</h2>", f"<p>{_e(stats)}</p>", _histogram(percents)]
    body += [f"<h2>{w['labs']}</h2>", *_labs_table(batch, lang, w)]
    body += [f"<h2>{w['hard']}</h2>", *_hard_table(batch, lang, w, limit)]
    body += [f"<h2>{w['all']}</h2>", *_submissions_table(batch, w, lang)]
    return (
        f'<!DOCTYPE html>\n<html lang="{"en" if lang == "en" else "zh-CN"}"><head>'
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f"<title>miniLLM — {w['title']}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
