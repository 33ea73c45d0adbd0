"""The one layout every lab handout follows, in both languages, and a check of it.

Every `labs/labNN/TASK.md` (Chinese) and `TASK.en.md` (English) has the same title line,
the same header, the same seven sections in the same order, numbered task subsections
with the same four labels, and thought questions marked required or optional; the two
languages match section by section. `labs/HANDOUT.md` explains the layout to authors;
`layout_problems` lists every place where a lab's handouts leave it, and the size budget
that keeps a handout readable in one sitting.

What it does not check: the prose itself, and the output blocks (`grader.course.handouts` keeps
those equal to real runs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.labs import LabInfo

__all__ = ["FILES", "HEADER", "SECTIONS", "SIZE_BUDGET", "TASK_LABELS", "layout_problems"]

FILES = {"zh": "TASK.md", "en": "TASK.en.md"}
SECTIONS = {
    "zh": ("实验目的", "为什么是现在", "实验环境", "实验内容", "现象", "思考题", "上节 / 下节"),
    "en": (
        "Goals",
        "Why now",
        "Setup",
        "Tasks",
        "What you will see",
        "Thought questions",
        "Previous / next",
    ),
}
SETUP, TASKS, RESULTS, QUESTIONS = 2, 3, 4, 5  # indices into SECTIONS
HEADER = {
    "zh": (
        "> 建议时长：{hours} 小时 · 要改的文件：`student.py`（只有它）· "
        "完成标志：`make test` 全部 PASS，退出码 0",
        ">",
        "> English version: [TASK.en.md](TASK.en.md)",
    ),
    "en": (
        "> Suggested time: {hours} hours · File to edit: `student.py` (only that one) · "
        "Done when: `make test` is all PASS, exit status 0",
        ">",
        "> 中文版：[TASK.md](TASK.md)",
    ),
}
TASK_LABELS = ("**action**", "**context**", "**check**", "**hint**")
SIZE_BUDGET = 16 * 1024  # bytes of UTF-8 per file: a handout is read in one sitting

_QUESTION = {
    "zh": re.compile(r"^\d+\. \*\*（(必做|选做)）"),
    "en": re.compile(r"^\d+\. \*\*\((Required|Optional)\)"),
}
_KIND = {"必做": "required", "选做": "optional", "Required": "required", "Optional": "optional"}
_MARKER = re.compile(r"^\s*<!-- verify:(\w+)([^>]*)-->$")


@dataclass
class _Section:
    name: str
    line: int  # 1-based line of the heading
    lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, text)
    subs: list[tuple[int, str]] = field(default_factory=list)  # H3 headings


@dataclass
class _Outline:
    lines: list[str]
    sections: list[_Section]
    deeper: list[int]  # lines of headings below H3
    markers: list[tuple[int, str, str]]  # (line, kind, options)


def _outline(text: str) -> _Outline:
    """Headings outside code fences, grouped by H2, and the verify markers."""
    lines = text.split("\n")
    sections: list[_Section] = []
    deeper: list[int] = []
    markers: list[tuple[int, str, str]] = []
    fenced = False
    for n, line in enumerate(lines, 1):
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            sections.append(_Section(line[3:].strip(), n))
            continue
        elif not fenced and line.startswith("### "):
            if sections:
                sections[-1].subs.append((n, line[4:].strip()))
        elif not fenced and line.startswith("####"):
            deeper.append(n)
        if m := _MARKER.match(line):
            markers.append((n, m.group(1), " ".join(m.group(2).split())))
        if sections:
            sections[-1].lines.append((n, line))
    return _Outline(lines, sections, deeper, markers)


_TIE = re.compile(r"(?<=\])<!-- [\w.-]+ -->")


def _section_of(outline: _Outline, line: int) -> int:
    """Index of the H2 section that holds `line` (-1 before the first)."""
    idx = -1
    for i, sec in enumerate(outline.sections):
        if sec.line <= line:
            idx = i
    return idx


def _one_file(path: Path, lang: str, lab_no: int, outline: _Outline) -> list[str]:
    problems: list[str] = []
    # what a student reads: a test reference's hidden id (`[TEST 7]<!-- mask_causal -->`,
    # see `grader.course.handouts`) is not counted
    text = _TIE.sub("", path.read_text(encoding="utf-8"))
    size = len(text.encode("utf-8"))
    if size > SIZE_BUDGET:
        problems.append(f"{path}: {size} bytes, over the budget of {SIZE_BUDGET}")
    head = outline.lines[2:5]
    pattern = re.escape(HEADER[lang][0]).replace(re.escape("{hours}"), r"\d+")
    if len(head) < 3 or not re.fullmatch(pattern, head[0]) or head[1:] != list(HEADER[lang][1:]):
        problems.append(f"{path}:3: the header must be the three lines {HEADER[lang]}")
    names = tuple(s.name for s in outline.sections)
    if names != SECTIONS[lang]:
        problems.append(f"{path}: sections are {names}, must be {SECTIONS[lang]}")
        return problems
    for n in outline.deeper:
        problems.append(f"{path}:{n}: no headings below ###")
    for i, sec in enumerate(outline.sections):
        if sec.subs and i not in (SETUP, TASKS):
            problems.append(f"{path}:{sec.line}: ### headings only under {SECTIONS[lang][SETUP]}")
    problems += _tasks(path, lab_no, outline.sections[TASKS])
    problems += _questions(path, lang, outline.sections[QUESTIONS])
    for n, kind, opts in outline.markers:
        where = _section_of(outline, n)
        if kind in ("baseline", "target") and where != RESULTS:
            problems.append(f"{path}:{n}: verify:{kind} belongs under {SECTIONS[lang][RESULTS]}")
        cwd = re.search(r"cwd=(\S+)", opts)
        if kind == "script" and cwd and where >= 0:
            before = "\n".join(t for k, t in outline.sections[where].lines if k < n)
            if f"`{cwd.group(1)}`" not in before:
                problems.append(
                    f"{path}:{n}: the text before this snippet must say where it runs "
                    f"(`{cwd.group(1)}`)"
                )
    return problems


def _tasks(path: Path, lab_no: int, tasks: _Section) -> list[str]:
    problems: list[str] = []
    if not tasks.subs:
        problems.append(f"{path}:{tasks.line}: no task subsections")
    for k, (n, title) in enumerate(tasks.subs, 1):
        if not title.startswith(f"{lab_no}.{k} "):
            problems.append(f"{path}:{n}: task heading must start with '{lab_no}.{k} '")
        if not re.search(r"`\w+`$", title):
            continue  # a subsection that adds no function of its own
        end = tasks.subs[k][0] if k < len(tasks.subs) else 10**9
        starts = [t for m, t in tasks.lines if n < m < end]
        found = [lb for t in starts for lb in TASK_LABELS if t.startswith(lb)]
        if found != list(TASK_LABELS):
            problems.append(f"{path}:{n}: a task has the labels {TASK_LABELS} in order")
    return problems


def _questions(path: Path, lang: str, questions: _Section) -> list[str]:
    items = [(n, t) for n, t in questions.lines if re.match(r"^\d+\. ", t)]
    problems = [
        f"{path}:{n}: a question starts like '1. **（必做）' / '1. **(Required)'"
        for n, t in items
        if not _QUESTION[lang].match(t)
    ]
    for k, (n, t) in enumerate(items, 1):
        if not t.startswith(f"{k}. "):
            problems.append(f"{path}:{n}: questions are numbered 1, 2, 3, …")
    if not items:
        problems.append(f"{path}:{questions.line}: no thought questions")
    return problems


def _signature(outline: _Outline, lang: str) -> dict[str, object]:
    """What must be the same in both languages."""
    secs = outline.sections
    hours = re.search(r"\d+", outline.lines[2]) if len(outline.lines) > 2 else None
    kinds = []
    if len(secs) > QUESTIONS:
        for _, t in secs[QUESTIONS].lines:
            if m := _QUESTION[lang].match(t):
                kinds.append(_KIND[m.group(1)])
    return {
        "suggested hours": hours.group(0) if hours else None,
        "number of ### headings per section": [len(s.subs) for s in secs],
        "functions named in the task headings": [
            re.findall(r"`(\w+)`", t) for _, t in (secs[TASKS].subs if len(secs) > TASKS else [])
        ],
        "required/optional questions": kinds,
        "verify markers": [(kind, opts) for _, kind, opts in outline.markers],
    }


def layout_problems(info: LabInfo) -> list[str]:
    """Where the lab's TASK.md and TASK.en.md leave the common layout, or each other."""
    lab_no = int(info.id[3:])
    problems: list[str] = []
    signatures: dict[str, dict[str, object]] = {}
    for lang, name in FILES.items():
        path = info.dir / name
        if not path.is_file():
            problems.append(f"{path}: missing")
            continue
        outline = _outline(path.read_text(encoding="utf-8"))
        problems += _one_file(path, lang, lab_no, outline)
        signatures[lang] = _signature(outline, lang)
    if len(signatures) == 2:
        for key, zh in signatures["zh"].items():
            if zh != signatures["en"][key]:
                problems.append(
                    f"{info.dir}: TASK.md and TASK.en.md differ in {key}: "
                    f"{zh} vs {signatures['en'][key]}"
                )
    return problems
