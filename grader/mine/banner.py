"""The start-up table of `--mine`: each piece, whose code runs it, and why.

    piece               lab     code       why
    BPE encoding        lab12   yours      lab12 passes (8/8 tests) · ~3 ms per reply
    softmax             lab04   yours      lab04 passes (9/9 tests) · ~21 ms per reply
    LayerNorm           lab05   framework  lab05 not passing: 3/9 tests
    ...
    (not used)          lab07   —          chatting runs inference only: nothing is trained
    9 of 10 pieces run your code.

The labs no piece comes from are listed last, each with the reason (`pieces.NOT_USED`).

Printed with rich like `minillm status` (plain text when not a terminal or with NO_COLOR).
"""

from __future__ import annotations

import os
from typing import TextIO

from grader.i18n import Lang, Text
from grader.mine.choose import Selection

__all__ = ["print_selection", "summary", "unused_labs"]

_STATES = {
    "yours": ("你的", "yours", "green"),
    "framework": ("框架", "framework", "yellow"),
    "unused": ("—", "—", "dim"),
}


def unused_labs() -> list[tuple[str, Text]]:
    """(lab, why) for each lab of this course whose code no product runs."""
    from grader.labs import all_labs
    from grader.mine.pieces import NOT_USED

    present = {info.id for info in all_labs()}
    return [(lab, why) for lab, why in NOT_USED.items() if lab in present]


def summary(selection: Selection, lang: Lang) -> str:
    """One line: how many of the pieces in use run the student's code."""
    used = [c for c in selection.choices if c.state != "unused"]
    mine = sum(c.state == "yours" for c in used)
    if lang == "zh":
        return f"{len(used)} 个部件中有 {mine} 个运行你的代码。"
    return f"{mine} of {len(used)} pieces run your code."


def print_selection(selection: Selection, lang: Lang, file: TextIO, title: str = "") -> None:
    """Print the table (and `title` above it) to `file`."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text as RichText

    from grader.render.term import glyphs

    tty = file.isatty() and not os.environ.get("NO_COLOR")
    console = Console(file=file, highlight=False, no_color=not tty, width=None if tty else 120)
    ascii_only = glyphs(file).full != "█"
    table = Table(
        box=box.ASCII2 if ascii_only else box.SIMPLE_HEAD,
        pad_edge=False,
        title=title or None,
        title_justify="left",
    )
    heads = ("部件", "实验", "代码", "原因") if lang == "zh" else ("piece", "lab", "code", "why")
    for head in heads:
        table.add_column(head, overflow="fold")
    for c in selection.choices:
        zh, en, style = _STATES[c.state]
        state = RichText(zh if lang == "zh" else en, style=style)
        table.add_row(c.info.title.pick(lang), c.info.lab, state, c.reason.pick(lang))
    for lab, why in unused_labs():
        dash = RichText("—", style="dim")
        table.add_row("（不使用）" if lang == "zh" else "(not used)", lab, dash, why.pick(lang))
    console.print(table)
    console.print(summary(selection, lang))
