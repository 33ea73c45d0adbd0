"""The similarity report: one self-contained HTML page, and the lines for a terminal.

Per lab, the pairs of submissions ranked by score (`grader.similarity.rank`), the top ones
each with the two files side by side and the regions their shared fingerprints cover
marked. The page opens with the line that matters most: it is a lead for a human, never a
verdict. It needs nothing from the network (inline CSS, no script), so it can be mailed or
opened offline, as the class report of ``minillm grade`` (`grader.render.classreport`).

Every text from a submission is hostile: it is HTML-escaped, and first every control
character, bidi override, zero-width or other invisible format character (and a lone
surrogate) is written as a visible ``\\u....`` escape (`plain`), so nothing in a student's
file can hide code, reorder what is shown or reach the page as markup. A file is shown up
to `MAX_SHOWN` characters, and says so when it is cut.

What it does not do: decide, or rank the students; pairs below ``min_score`` are left out.
"""

from __future__ import annotations

import html
import re

from grader.i18n import Text, tr
from grader.similarity.intake import Comparison
from grader.similarity.rank import Pair, shared_spans

__all__ = [
    "DISCLAIMER",
    "MAX_SHOWN",
    "one_line",
    "plain",
    "ranked",
    "render_report",
    "shown_pairs",
    "text_lines",
]

MAX_SHOWN = 200_000  # characters of one file shown in the page
DISCLAIMER = tr(
    "这份报告只是供人追查的线索，绝不是判决：相似的代码也可能来自同一个提示、同一份讲义或常见的"
    "写法。下任何结论之前，请亲自读这两份文件，并听听学生怎么说。",
    "This report is a lead for a human to follow, never a verdict: similar code can also "
    "come from the same hint, the same handout or a common idiom. Read both files yourself, "
    "and hear the students, before you conclude anything.",
)
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2028\u2029"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]"
)
_WORDS = {
    "zh": {
        "title": "代码相似度报告",
        "meta": "{subs} 份提交，实验 {labs}。",
        "method": "方法：把代码变成记号（标识符一律视为同一个，注释、文档字符串和空白都去掉），"
        "取 {k} 个记号的 k-gram 指纹并做窗口为 {w} 的 winnowing（与 MOSS 相同）；"
        "去掉与本实验桩代码相同的部分和少于 {f} 个记号的函数。"
        "分数 = 共有指纹数 / 较小一方的指纹数（至少按 {floor} 计），在 0 到 1 之间。",
        "problems": "跳过的提交",
        "few": "不到两份文件，无可比较。",
        "none": "没有分数不低于 {min} 的一对。",
        "rank": "名次",
        "a": "提交 A",
        "b": "提交 B",
        "score": "分数",
        "shared": "共有指纹",
        "cut": "…（文件太长，只显示前 {n} 个字符）",
    },
    "en": {
        "title": "Code similarity report",
        "meta": "{subs} submissions, labs {labs}.",
        "method": "Method: the code as tokens (every identifier the same token; comments, "
        "docstrings and whitespace dropped), fingerprints of {k}-token k-grams winnowed with "
        "a window of {w} (as MOSS does); what the lab's stub also holds and functions of "
        "fewer than {f} tokens are left out. Score = shared fingerprints / the smaller "
        "side's fingerprints (counted as at least {floor}), from 0 to 1.",
        "problems": "Submissions left out",
        "few": "Fewer than two files: nothing to compare.",
        "none": "No pair scores {min} or more.",
        "rank": "rank",
        "a": "submission A",
        "b": "submission B",
        "score": "score",
        "shared": "shared fingerprints",
        "cut": "… (a long file: only its first {n} characters are shown)",
    },
}
_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC",
sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#1d2330;background:#fff}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:2em;
border-bottom:1px solid #d7dce5;padding-bottom:.3em}.meta{color:#5a6478}
.warn{background:#fff3cd;border:1px solid #e0c36a;padding:.6em .9em;border-radius:4px;
font-weight:600}table{border-collapse:collapse;width:100%;font-size:.92em}
th,td{text-align:left;padding:.35em .5em;border-bottom:1px solid #e6e9ef}
th{background:#f3f5f9}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
details{margin:.8em 0}summary{cursor:pointer;font-weight:600}
.side{display:grid;grid-template-columns:1fr 1fr;gap:.8em}.side h3{font-size:1em;margin:.4em 0}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:.8em;background:#f7f8fa;
padding:.5em;border-radius:3px;max-height:40em;overflow:auto}
mark{background:#ffd28a;color:inherit}
"""


def plain(text: str) -> str:
    """`text` with every invisible or control character (bar newline and tab) written as a
    visible ``\\u....`` escape.

    Example:
        >>> plain("ok\\u202e")
        'ok\\\\u202e'
    """
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def one_line(text: str) -> str:
    """`plain` on one line: line breaks and tabs made spaces (a name, a problem)."""
    return plain(text).replace("\n", " ").replace("\t", " ")


def _e(text: str) -> str:
    """A student's text escaped for HTML, as one line."""
    return html.escape(one_line(text), quote=True)


def shown_pairs(comparison: Comparison, lab: str, top: int, min_score: float) -> list[Pair]:
    """The lab's pairs a report shows: the first `top` that score `min_score` or more."""
    return [p for p in comparison.pairs.get(lab, []) if p.score >= min_score][:top]


def _marked(text: str, spans: list[tuple[int, int]], lang: str) -> str:
    """`text` escaped for a ``<pre>``, the `spans` in ``<mark>``, cut at `MAX_SHOWN`."""
    shown = text[:MAX_SHOWN]
    parts: list[str] = []
    at = 0
    for lo, hi in spans:
        lo, hi = min(max(lo, at), len(shown)), min(hi, len(shown))
        if hi <= lo:
            continue
        parts.append(html.escape(plain(shown[at:lo]), quote=True))
        parts.append(f"<mark>{html.escape(plain(shown[lo:hi]), quote=True)}</mark>")
        at = hi
    parts.append(html.escape(plain(shown[at:]), quote=True))
    if len(text) > MAX_SHOWN:
        parts.append("\n" + html.escape(_WORDS[lang]["cut"].format(n=MAX_SHOWN)))
    return "".join(parts)


def _pair_view(comparison: Comparison, pair: Pair, rank: int, lang: str) -> str:
    a = comparison.document(pair.lab, pair.a)
    b = comparison.document(pair.lab, pair.b)
    spans_a, spans_b = shared_spans(a, b, comparison.settings.k)
    opened = " open" if rank == 1 else ""
    return (
        f'<details id="{pair.lab}-{rank}"{opened}><summary>#{rank} {_e(pair.a)} ↔ '
        f"{_e(pair.b)} — {pair.score:.2f}</summary>"
        f'<div class="side"><div><h3>{_e(pair.a)}</h3>'
        f"<pre>{_marked(a.text, spans_a, lang)}</pre></div>"
        f"<div><h3>{_e(pair.b)}</h3><pre>{_marked(b.text, spans_b, lang)}</pre></div></div>"
        "</details>"
    )


def _lab_section(comparison: Comparison, lab: str, top: int, min_score: float, lang: str) -> str:
    w = _WORDS[lang]
    out = [f'<h2 id="{lab}">{html.escape(lab)}</h2>']
    if len(comparison.docs.get(lab, [])) < 2:
        return out[0] + f'<p class="meta">{w["few"]}</p>'
    pairs = shown_pairs(comparison, lab, top, min_score)
    if not pairs:
        return out[0] + f'<p class="meta">{w["none"].format(min=f"{min_score:g}")}</p>'
    out.append(
        f'<table><tr><th class="n">{w["rank"]}</th><th>{w["a"]}</th><th>{w["b"]}</th>'
        f'<th class="n">{w["score"]}</th><th class="n">{w["shared"]}</th></tr>'
    )
    for rank, p in enumerate(pairs, 1):
        out.append(
            f'<tr><td class="n"><a href="#{lab}-{rank}">{rank}</a></td><td>{_e(p.a)}</td>'
            f'<td>{_e(p.b)}</td><td class="n">{p.score:.2f}</td>'
            f'<td class="n">{p.shared}</td></tr>'
        )
    out.append("</table>")
    out.extend(_pair_view(comparison, p, rank, lang) for rank, p in enumerate(pairs, 1))
    return "\n".join(out)


def _problems(problems: list[Text], lang: str) -> str:
    if not problems:
        return ""
    items = "".join(f"<li>{_e(p.pick(lang))}</li>" for p in problems)
    return f"<h2>{_WORDS[lang]['problems']}</h2><ul>{items}</ul>"


def render_report(
    comparison: Comparison, lang: str, *, top: int = 20, min_score: float = 0.0
) -> str:
    """The whole page, in `lang` ("zh" or "en"): the disclaimer, how scores are made, the
    submissions left out, then each lab's `top` pairs scoring `min_score` or more."""
    w = _WORDS["en" if lang == "en" else "zh"]
    lang = "en" if lang == "en" else "zh"
    s = comparison.settings
    meta = w["meta"].format(subs=len(comparison.names), labs=", ".join(comparison.labs))
    method = w["method"].format(k=s.k, w=s.w, f=s.min_function, floor=s.floor)
    sections = [_lab_section(comparison, lab, top, min_score, lang) for lab in comparison.labs]
    return "\n".join(
        [
            f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">',
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'\">",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{w['title']}</title><style>{_CSS}</style></head><body>",
            f"<h1>{w['title']}</h1>",
            f'<p class="warn">{html.escape(DISCLAIMER.pick(lang))}</p>',
            f'<p class="meta">{html.escape(meta)}</p><p class="meta">{html.escape(method)}</p>',
            _problems(comparison.problems, lang),
            *sections,
            "</body></html>\n",
        ]
    )


def ranked(comparison: Comparison, min_score: float = 0.0) -> list[dict[str, str | float]]:
    """Every pair scoring `min_score` or more, of every lab, highest score first (ties in
    lab order, then each lab's own order), as ``{"a", "b", "lab", "score"}`` (``--json``)."""
    order = {lab: n for n, lab in enumerate(comparison.labs)}
    rows = [
        (-p.score, order[lab], i, p)
        for lab in comparison.labs
        for i, p in enumerate(comparison.pairs.get(lab, []))
        if p.score >= min_score
    ]
    rows.sort(key=lambda r: r[:3])
    return [{"a": p.a, "b": p.b, "lab": p.lab, "score": round(p.score, 4)} for *_, p in rows]


def text_lines(comparison: Comparison, lang: str, *, top: int, min_score: float) -> list[str]:
    """What the terminal shows: the disclaimer, then per lab its shown pairs, one a line
    (``lab04  0.93  alice ↔ bob``)."""
    lines = [DISCLAIMER.pick(lang)]
    for lab in comparison.labs:
        for p in shown_pairs(comparison, lab, top, min_score):
            lines.append(f"{lab}  {p.score:.2f}  {one_line(p.a)} ↔ {one_line(p.b)}")
    return lines
