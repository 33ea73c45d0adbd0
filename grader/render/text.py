"""A batch as plain text (``--format text``, the default).

One submission: its name and score, then each lab's full report (as `minillm verify`
prints it) followed by the lab's score. Several: one line per submission with its score
per lab, the total and any error, sorted as given. A run that is not isolated says so on
the first line. A submission's name and error are escaped to one line (a name is cut at
`NAME_LIMIT` characters), so no name can move the cursor, rewrite a row or add one.
"""

from __future__ import annotations

from grader.render.common import fmt_points, one_line
from grader.render.lab import render_plain
from grader.results import BatchResult, SubmissionResult

__all__ = ["NAME_LIMIT", "NOT_ISOLATED", "UID_LEVEL", "isolation_lines", "render_text"]

NOT_ISOLATED = {
    "zh": "注意：这次评测没有隔离（NOT isolated）：学生代码以评测者的身份运行，只有普通沙箱",
    "en": "NOT isolated: student code ran as the grader's user, in the ordinary sandbox only",
}
UID_LEVEL = {
    "zh": "隔离：uid 级别（bubblewrap 在这里无法创建命名空间）：学生代码以一个无特权的用户运行，"
    "看不到隐藏检查，但和评测机共用文件系统",
    "en": "isolation: the uid level (bubblewrap cannot make namespaces here): student code ran "
    "as an unprivileged user that cannot read the hidden checks, on the host's file system",
}
RULE = "=" * 40


def isolation_lines(batch: BatchResult, lang: str) -> list[str]:
    """What a report says first about the run's isolation ([] for bubblewrap)."""
    if not batch.isolated:
        return [NOT_ISOLATED[lang]]
    return [UID_LEVEL[lang]] if batch.isolation == "uid" else []


NAME_LIMIT = 120  # characters of a submission's name in the text


def _name(sub: SubmissionResult) -> str:
    return one_line(sub.name, NAME_LIMIT)


def _error(sub: SubmissionResult, lang: str) -> str:
    return one_line(sub.error_in(lang))


def _score(sub: SubmissionResult) -> str:
    return f"{fmt_points(sub.score)}/{fmt_points(sub.max_score)}"


def _one(sub: SubmissionResult, lang: str) -> list[str]:
    label = "得分" if lang == "zh" else "score"
    lines = [RULE, f"  {_name(sub)} — {label} {_score(sub)}", RULE]
    if sub.error:
        lines.append(("评测出错: " if lang == "zh" else "grading error: ") + _error(sub, lang))
    if sub.note:
        lines.append(("注意: " if lang == "zh" else "note: ") + one_line(sub.note_in(lang)))
    if sub.seed is not None:
        lines.append(f"seed: {sub.seed}")
    lines.append("")
    for lab in sub.labs:
        lines.append(render_plain(lab, lang).rstrip("\n"))
        lines.append(f"{label}: {fmt_points(lab.score)}/{fmt_points(lab.max_score)}")
        lines.append("")
    return lines


def _table(batch: BatchResult, lang: str) -> list[str]:
    names = [_name(s) for s in batch.submissions] or [""]
    width = max(12, *(len(n) for n in names))
    head = f"{'submission':<{width}}  " + "  ".join(f"{lab:>6}" for lab in batch.labs)
    lines = [head + f"  {'total':>9}"]
    most = {lab.lab: lab.max_score for sub in batch.submissions for lab in sub.labs}  # points
    if most:
        cells = [
            f"{fmt_points(most[lab_id]) if lab_id in most else '-':>6}" for lab_id in batch.labs
        ]
        label = "（满分）" if lang == "zh" else "(max)"
        lines.append(
            f"{label:<{width}}  " + "  ".join(cells) + f"  {fmt_points(batch.max_score):>9}"
        )
    broken = False
    for sub, name in zip(batch.submissions, names, strict=False):
        cells = []
        for lab_id in batch.labs:
            lab = sub.lab(lab_id)
            mark = "!" if lab is not None and lab.import_error is not None else ""
            broken = broken or bool(mark)
            cells.append(f"{(fmt_points(lab.score) if lab else '-') + mark:>6}")
        row = f"{name:<{width}}  " + "  ".join(cells) + f"  {_score(sub):>9}"
        lines.append(row + (f"  ! {_error(sub, lang)}" if sub.error else ""))
    if broken:
        lines.append(
            "（分数后的 ! 表示那份 student.py 无法导入）"
            if lang == "zh"
            else "(a score marked ! is of a student.py that does not import)"
        )
    if batch.stopped:
        done, why = batch.finished, batch.stopped
        lines.append(
            f"（评分被中止（{why}）：{done}/{batch.total} 份提交评完）"
            if lang == "zh"
            else f"(grading was stopped ({why}): {done} of {batch.total} submissions finished)"
        )
    elif not batch.complete:
        done = len(batch.submissions)
        lines.append(
            f"（未完成：{done}/{batch.total}）"
            if lang == "zh"
            else f"(partial: {done}/{batch.total})"
        )
    return lines


def render_text(batch: BatchResult, lang: str) -> str:
    """The text, newline-terminated."""
    lines = isolation_lines(batch, lang)
    lines += [""] if lines else []
    if len(batch.submissions) == 1 and batch.total <= 1:
        lines += _one(batch.submissions[0], lang)
    else:
        lines += _table(batch, lang)
    return "\n".join(lines).rstrip("\n") + "\n"
