"""A class report: one self-contained HTML page about a graded batch (``--report class.html``).

What an instructor reads after grading a class: how the total scores are distributed, how
many students passed each lab (every test of it) and what each lab's mean score is, and
the checks that most students fail, each with its test's title and the most common
failure message, so it is clear what to teach again. Then one row per submission, which
opens (a ``<details>``) on that student's full report: each lab's plain report
(`grader.render.lab.render_plain`), as ``minillm verify`` prints it.

The checks are ranked across all labs by how many students fail them (a student with
several submissions counts once). Ties go round the labs: every lab's first check comes
before any lab's second, so no lab is crowded out by the labs before it. The checks of one
test that fail for exactly the same students are one row ("and 7 more checks of this
test"), so one student's bug does not fill the table. A hidden check is labelled so.
A lab whose student.py does not import is one row of its own, and its score is marked in
the table of submissions. A submission with nothing graded (an empty folder, a zip without
any student.py, one refused) is an error row: it is not a student with 0 points, and it
counts in no score, rate or distribution.

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

from grader.i18n import Text
from grader.render.common import block, fmt_points, one_line
from grader.render.lab import render_plain
from grader.results import BatchResult, Status, SubmissionResult

__all__ = ["FailingCheck", "failing_checks", "graded", "render_class_report"]

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
        "hidden": "隐藏",
        "more": "还有本测试的 {n} 项检查，没通过的是同一批学生",
        "rest": "另有 {n} 项检查没有列出，每项最多 {k} 名学生没通过。",
        "ungraded": "份没有评分（见下面的错误行）",
        "empty": "没有可评分的内容：提交里没有任何 labs/*/student.py",
        "noimport": "student.py 无法导入",
        "report": "完整报告",
        "bugs": "认出的常见错误（按出现的学生数）",
        "bug": "错误",
        "nobugs": "没有哪份提交的失败像已知的错误。",
        "bugline": "{n} 名学生：{bug}",
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
        "hidden": "hidden",
        "more": "and {n} more checks of this test, failed by the same students",
        "rest": "{n} more checks are not listed; each fails for at most {k} students.",
        "ungraded": "not graded (the error rows below)",
        "empty": "nothing to grade: the submission holds no labs/*/student.py",
        "noimport": "student.py does not import",
        "report": "full report",
        "bugs": "Known bugs recognised (by number of students)",
        "bug": "bug",
        "nobugs": "No submission fails like a known bug.",
        "bugline": "{n} students: {bug}",
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
.tag{font-size:.75em;background:#5a6478;color:#fff;border-radius:3px;padding:0 .35em}
.bad{color:#b3261e;font-weight:600}tr.err td{color:#b3261e}
tr.more td{border-bottom:1px solid #d7dce5;padding-top:0}
details pre{max-height:40em}summary{cursor:pointer;color:#3b5fa0}
"""


@dataclass
class FailingCheck:
    """A check (or the checks of one test that fail for the same students) and the
    students that fail it; `count` is how many."""

    lab: str
    test: str
    title: str
    check: str
    count: int = 0
    messages: Counter[str] = field(default_factory=Counter)
    hidden: bool = False
    more: int = 0  # further checks of the same test, failed by exactly the same students
    students: set[str] = field(default_factory=set)
    order: int = 0  # the test's number, then the check's place in it (ties in a lab)

    @property
    def message(self) -> str:
        """The most common failure message (its first lines)."""
        return self.messages.most_common(1)[0][0] if self.messages else ""


def graded(sub: SubmissionResult) -> bool:
    """Whether the submission has a grade at all (an empty or refused one has no lab)."""
    return bool(sub.labs)


def _student(sub: SubmissionResult) -> str:
    return sub.student_id or sub.name


def _failures(batch: BatchResult, lang: str) -> list[FailingCheck]:
    """Every failing check, once per student, in lab order (not yet merged or ranked)."""
    found: dict[tuple[str, str, str], FailingCheck] = {}
    for sub in filter(graded, batch.submissions):
        who = _student(sub)
        for lab in sub.labs:
            if lab.import_error is not None:
                entry = found.setdefault(
                    (lab.lab, "", ""),
                    FailingCheck(lab.lab, "", _IMPORT.pick(lang), _IMPORT.pick(lang)),
                )
                if who not in entry.students:
                    entry.students.add(who)
                    rows = lab.import_error.pick(lang).strip().splitlines()
                    entry.messages["\n".join(rows[-4:])] += 1
                continue
            for test in lab.tests:
                for i, c in enumerate(test.checks):
                    if c.status not in _FAILING:
                        continue
                    key = (lab.lab, test.id, c.name.en)
                    entry = found.setdefault(
                        key,
                        FailingCheck(
                            lab.lab,
                            test.id,
                            test.title.pick(lang),
                            c.name.pick(lang),
                            hidden=test.hidden,
                            order=test.number * 10_000 + i,
                        ),
                    )
                    if who in entry.students:
                        continue
                    entry.students.add(who)
                    text = c.message.pick(lang) if c.message else c.status.value
                    entry.messages["\n".join(text.strip().splitlines()[:6])] += 1
    for entry in found.values():
        entry.count = len(entry.students)
    return list(found.values())


def failing_checks(batch: BatchResult, lang: str) -> list[FailingCheck]:
    """Every check that fails for some student, ranked (see the module docstring)."""
    rows: list[FailingCheck] = []
    same: dict[tuple[str, str, frozenset[str]], FailingCheck] = {}
    for entry in sorted(_failures(batch, lang), key=lambda f: (f.lab, f.order)):
        first = same.setdefault((entry.lab, entry.test, frozenset(entry.students)), entry)
        if first is entry or not entry.test:
            rows.append(entry)
        else:
            first.more += 1
            first.messages.update(entry.messages)
    labs = {lab: i for i, lab in enumerate(batch.labs)}
    rank: dict[int, int] = {}
    by_lab: dict[str, list[FailingCheck]] = {}
    for entry in sorted(rows, key=lambda f: (-f.count, f.order)):
        by_lab.setdefault(entry.lab, []).append(entry)
    for entries in by_lab.values():
        rank.update({id(e): i for i, e in enumerate(entries)})
    return sorted(
        rows,
        key=lambda f: (-f.count, rank[id(f)], labs.get(f.lab, len(labs)), f.lab, f.order),
    )


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


def _labs_table(
    batch: BatchResult, subs: list[SubmissionResult], lang: str, w: dict[str, str]
) -> list[str]:
    rows = [
        f"<table><tr><th>{w['lab']}</th><th>{w['passed']}</th><th></th><th>{w['mean']}</th></tr>"
    ]
    n = len(subs) or 1
    for lab_id in batch.labs:
        results = [r for s in subs if (r := s.lab(lab_id)) is not None]
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
    found = failing_checks(batch, lang)
    hard = found[:limit]
    if not hard:
        return [f"<p>{w['none']}</p>"]
    n = len({_student(s) for s in batch.submissions if graded(s)}) or 1
    rows = [
        f"<table><tr><th>{w['lab']}</th><th>{w['check']}</th><th class=n>{w['students']}</th>"
        f"<th>{w['message']}</th></tr>"
    ]
    for f in hard:
        tag = f" <span class=tag>{w['hidden']}</span>" if f.hidden else ""
        what = f"<b>{_e(f.title)}</b>{tag}" + (f"<br>{_e(f.check)}" if f.check != f.title else "")
        if f.more:
            what += f"<br><i>{_e(w['more'].format(n=f.more))}</i>"
        rows.append(
            f"<tr><td>{_e(f.lab)}</td><td>{what}</td>"
            f"<td class=n>{f.count}/{n} ({100 * f.count / n:.0f}%)</td>"
            f"<td><pre>{_e(f.message, lines=True)}</pre></td></tr>"
        )
    rows.append("</table>")
    if len(found) > len(hard):
        rest = w["rest"].format(n=len(found) - len(hard), k=found[len(hard)].count)
        rows.append(f"<p class=meta>{_e(rest)}</p>")
    return rows


def known_bugs(batch: BatchResult, lang: str) -> list[tuple[str, str, int]]:
    """(lab, the bug in `lang`, how many students' reports name it), most frequent first."""
    who: dict[tuple[str, str], set[str]] = {}
    for sub in filter(graded, batch.submissions):
        for lab in sub.labs:
            for test in lab.tests:
                for c in test.checks:
                    if c.diagnosis is not None:
                        key = (lab.lab, c.diagnosis.text.pick(lang))
                        who.setdefault(key, set()).add(_student(sub))
    return sorted(((k[0], k[1], len(v)) for k, v in who.items()), key=lambda r: (-r[2], r[0]))


def _bugs_table(batch: BatchResult, lang: str, w: dict[str, str]) -> list[str]:
    rows = known_bugs(batch, lang)
    if not rows:
        return [f"<p>{w['nobugs']}</p>"]
    out = [f"<table><tr><th>{w['lab']}</th><th>{w['bug']}</th></tr>"]
    out += [
        f"<tr><td>{_e(lab)}</td><td>{_e(w['bugline'].format(n=n, bug=bug))}</td></tr>"
        for lab, bug, n in rows
    ]
    return [*out, "</table>"]


def _score_cell(sub: SubmissionResult, lab_id: str, w: dict[str, str]) -> str:
    r = sub.lab(lab_id)
    if r is None:
        return "<td class=n>-</td>"
    if r.import_error is not None:
        mark = f' <span class=bad title="{w["noimport"]}">&#9888;</span>'
        return f"<td class=n>{fmt_points(r.score)}{mark}</td>"
    return f"<td class=n>{fmt_points(r.score)}</td>"


def _report(sub: SubmissionResult, lang: str, w: dict[str, str], span: int) -> str:
    """The row under a student's row that opens on their full report."""
    text = "\n".join(render_plain(lab, lang) for lab in sub.labs)
    return (
        f"<tr class=more><td colspan={span}><details><summary>{w['report']}: {_e(sub.name)}"
        f"</summary><pre>{_e(text, lines=True)}</pre></details></td></tr>"
    )


def _submissions_table(batch: BatchResult, w: dict[str, str], lang: str) -> list[str]:
    head = "".join(f"<th class=n>{_e(lab)}</th>" for lab in batch.labs)
    rows = [
        f"<table><tr><th>{w['name']}</th>{head}<th class=n>{w['total']}</th>"
        f"<th>{w['error']}</th></tr>"
    ]
    subs = sorted(filter(graded, batch.submissions), key=lambda s: (-s.score, s.name))
    for sub in subs:
        cells = "".join(_score_cell(sub, lab, w) for lab in batch.labs)
        rows.append(
            f"<tr><td>{_e(sub.name)}</td>{cells}<td class=n>{fmt_points(sub.score)}/"
            f"{fmt_points(sub.max_score)}</td><td>{_e(sub.error_in(lang))}</td></tr>"
        )
        rows.append(_report(sub, lang, w, len(batch.labs) + 3))
    for sub in sorted(batch.submissions, key=lambda s: s.name):
        if graded(sub):
            continue
        cells = "<td class=n>-</td>" * (len(batch.labs) + 1)
        why = sub.error_in(lang) or w["empty"]
        rows.append(f"<tr class=err><td>{_e(sub.name)}</td>{cells}<td>{_e(why)}</td></tr>")
    rows.append("</table>")
    if any(r.import_error is not None for s in subs for r in s.labs):
        rows.append(f"<p class=meta><span class=bad>&#9888;</span> {w['noimport']}</p>")
    return rows


def render_class_report(batch: BatchResult, lang: str, *, limit: int = 15) -> str:
    """The page, as one HTML document (UTF-8, no external resources)."""
    w = _WORDS["en" if lang == "en" else "zh"]
    subs = [s for s in batch.submissions if graded(s)]
    ungraded = len(batch.submissions) - len(subs)
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
        f"<p class=meta>{_e(when)} · {len(subs)} {w['subs']}"
        + (f" · {ungraded} {w['ungraded']}" if ungraded else "")
        + f" · {_e(', '.join(batch.labs))}</p>",
    ]
    if not batch.isolated:
        body.append(f"<p class=warn>{w['iso']}</p>")
    body += [f"<h2>{w['dist']}</h2>", f"<p>{_e(stats)}</p>", _histogram(percents)]
    body += [f"<h2>{w['labs']}</h2>", *_labs_table(batch, subs, lang, w)]
    body += [f"<h2>{w['hard']}</h2>", *_hard_table(batch, lang, w, limit)]
    body += [f"<h2>{w['bugs']}</h2>", *_bugs_table(batch, lang, w)]
    body += [f"<h2>{w['all']}</h2>", *_submissions_table(batch, w, lang)]
    return (
        f'<!DOCTYPE html>\n<html lang="{"en" if lang == "en" else "zh-CN"}"><head>'
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f"<title>miniLLM — {w['title']}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
