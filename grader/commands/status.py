"""`minillm status`: one table of the course — what passes, what is next.

    lab    title                 tests    checks   progress
    lab01  张量与数学运算          13/13    42/42    ██████████  done
    lab02  字节级 Tokenizer        4/11     12/20    ████░░░░░░
    ...
    lab13  BPE 对话整合             0/10     -        ░░░░░░░░░░  not started
    next: lab02 — cd labs/lab02 && make test

A lab not started shows no check count: a TODO test stops at its first check, and the
tests that depend on it run none, so a count would say nothing about the lab's checks.
The "next" command is spelled to run from the current folder (`grader.student.commands`).
When every lab whose code `minillm chat --mine` runs passes, the last line says to try it
(the capstone: the course's model answering with the student's own functions).

Results come from `grader.student.progress` (cached per file content, so a second run is quick).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

import click

from grader.i18n import LANGS, Lang, default_lang

if TYPE_CHECKING:
    from grader.render.term import Glyphs
    from grader.student.progress import LabProgress

__all__ = ["capstone_line", "chat_labs", "status"]

_BAR = 10


def _bar(done: int, total: int, full: str, empty: str) -> str:
    n = 0 if total == 0 else round(_BAR * done / total)
    return full * n + empty * (_BAR - n)


@click.command()
@click.option("--lang", type=click.Choice(LANGS), default=None, help="Language of the table.")
@click.option("--no-cache", is_flag=True, help="Verify every lab again, ignoring saved results.")
def status(lang: Lang | None, no_cache: bool) -> None:
    """Show every lab's progress and the next lab to do."""
    from grader.render.term import glyphs, prepare
    from grader.student.commands import verify_command
    from grader.student.progress import course_progress

    out = prepare(sys.stdout)
    chosen = lang or default_lang(getattr(out, "encoding", None))
    g = glyphs(out)
    labs = chat_labs()  # imported now: nothing is imported once student code has run
    rows = course_progress(use_cache=not no_cache)
    _table(rows, chosen, out, g)

    done = sum(r.done for r in rows)
    nxt = next((r for r in rows if not r.done), None)
    zh = chosen == "zh"
    if nxt is None:
        click.echo("全部完成！" if zh else "Every lab passes!")
    elif zh:
        run = verify_command(nxt.lab)
        click.echo(f"已完成 {done}/{len(rows)} 个实验。下一个: {nxt.lab} {g.arrow} {run}")
    else:
        run = verify_command(nxt.lab)
        click.echo(f"{done}/{len(rows)} labs done. Next: {nxt.lab} {g.arrow} {run}")
    line = capstone_line(rows, chosen, labs)
    if line:
        click.echo(line)


def chat_labs() -> list[str]:
    """The labs whose functions `minillm chat --mine` runs (`grader.mine.pieces`), in order."""
    from grader.mine.pieces import CATALOGUE, TURN

    return sorted({p.lab for p in (*CATALOGUE, TURN) if "chat" in p.commands})


def capstone_line(rows: list[LabProgress], lang: Lang, labs: list[str] | None = None) -> str | None:
    """ "try `minillm chat --mine`" once every lab that chat runs passes (`labs`, default
    `chat_labs()`), else None."""
    from grader.student.commands import minillm_command

    passed = {r.lab for r in rows if r.done}
    present = {r.lab for r in rows}
    needed = [lab for lab in (chat_labs() if labs is None else labs) if lab in present]
    if not needed or not set(needed) <= passed:
        return None
    command = f"{minillm_command()} chat --mine"
    which = ", ".join(needed)
    if lang == "zh":
        return f"试试 `{command}`：课程的模型用你自己写的代码（{which}）来回答。"
    return f"Try `{command}`: the course's model answers with your own code ({which})."


def _table(rows: list[LabProgress], lang: Lang, out: TextIO, g: Glyphs) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    zh = lang == "zh"
    tty = out.isatty() and not os.environ.get("NO_COLOR")
    console = Console(file=out, highlight=False, no_color=not tty, width=None if tty else 100)
    table = Table(box=box.SIMPLE_HEAD if g.full == "█" else box.ASCII2, pad_edge=False)
    for head, justify in zip(
        ("实验", "标题", "测试", "检查", "进度", "")
        if zh
        else ("lab", "title", "tests", "checks", "progress", ""),
        ("left", "left", "right", "right", "left", "left"),
        strict=True,
    ):
        table.add_column(head, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        if r.done:
            state, style = ("完成" if zh else "done"), "green"
        elif r.todo:
            state, style = ("未开始" if zh else "not started"), "dim"
        else:
            state, style = ("进行中" if zh else "in progress"), "yellow"
        table.add_row(
            r.lab,
            r.title.pick(lang),
            f"{r.tests_passed}/{r.tests_total}",
            "-" if r.todo else f"{r.checks_passed}/{r.checks_total}",  # see the docstring
            _bar(r.tests_passed, r.tests_total, g.full, g.empty),
            state,
            style=style,
        )
    console.print(table)
