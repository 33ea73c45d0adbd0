"""`minillm reset LAB`: put the lab's stub back, keeping the current file as a backup.

Nothing is lost: the current `student.py` is first copied to
`student.py.<timestamp>.bak` beside it, and the command says where. It asks before it
changes anything, unless `--yes`. The pristine stub is the lab's `.stub.py`, which ships
with the course and is identical to the `student.py` that it hands out.
"""

from __future__ import annotations

import shutil
import time

import click

from grader.commands.options import complete_lab
from grader.i18n import LANGS, Lang, default_lang

__all__ = ["reset"]


@click.command()
@click.argument("lab", shell_complete=complete_lab)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--lang", type=click.Choice(LANGS), default=None, help="Language of the messages.")
def reset(lab: str, yes: bool, lang: Lang | None) -> None:
    """Restore LAB's student.py to the stub (a backup of the current file is kept)."""
    from grader.labs import UnknownLab, resolve_lab

    zh = (lang or default_lang()) == "zh"
    try:
        info = resolve_lab(lab)
    except UnknownLab as e:
        raise click.UsageError(str(e)) from None
    stub = info.dir / ".stub.py"
    if not stub.is_file():
        raise click.UsageError(f"{info.id} has no pristine stub ({stub} is missing)")
    student = info.student
    if student.is_file() and student.read_bytes() == stub.read_bytes():
        click.echo(f"{student} 已经是原始的桩代码。" if zh else f"{student} is already the stub.")
        return
    question = (
        f"把 {student} 恢复成原始的桩代码？（当前文件会先备份）"
        if zh
        else f"Restore {student} to the stub? (the current file is backed up first)"
    )
    if not yes and not click.confirm(question, default=False):
        click.echo("没有改动。" if zh else "Nothing changed.")
        return
    if student.is_file():
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = student.with_name(f"student.py.{stamp}.bak")
        n = 1
        while backup.exists():
            n += 1
            backup = student.with_name(f"student.py.{stamp}-{n}.bak")
        shutil.copy2(student, backup)
        click.echo(f"备份: {backup}" if zh else f"backup: {backup}")
    shutil.copyfile(stub, student)
    click.echo(f"已恢复: {student}" if zh else f"restored: {student}")
