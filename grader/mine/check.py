"""`minillm mine --check`: does each piece of the student's reproduce the framework's?

Every piece the student has written (whether or not its lab passes yet) is run alone,
every other piece the framework's, and compared with the framework on fixed prompts in
Chinese and English (`check_model`, `check_text`). Then all of the student's pieces run
together and each greedy reply is compared with the framework's. The report names the
first piece, in the order a reply passes through them, whose output differs, and the lab
to revisit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TextIO

from framework.bpe_tokenizer import BPETokenizer
from framework.serving import ChatEngine, ReplySettings
from grader.i18n import Lang, Text, tr
from grader.labs import all_labs
from grader.mine.check_model import Outcome, Reference, compare_model, compare_sampling, references
from grader.mine.check_text import compare_bpe, compare_format, compare_http
from grader.mine.choose import imported_functions, not_ready
from grader.mine.engine import MineEngine
from grader.mine.load import load_lab_module, read_lab_file
from grader.mine.pieces import CATALOGUE, MODEL_PIECES, PieceError, PieceInfo, Pieces

__all__ = ["PROMPTS", "CheckReport", "CheckRow", "print_check", "run_check"]

PROMPTS = ("你好", "1+2=?", "hello", "what is attention?")
REPLY_TOKENS = 32  # length of the replies compared in the "together" row


@dataclass
class CheckRow:
    """One piece's comparison (info None: all of the student's pieces together)."""

    info: PieceInfo | None
    status: str  # "same", "different", "error", "not written", "n/a"
    detail: Text


@dataclass
class CheckReport:
    """Every row, and the first piece that differs."""

    rows: list[CheckRow] = field(default_factory=list)

    @property
    def first(self) -> CheckRow | None:
        """The first piece (pipeline order) whose output differs or that fails."""
        return next((r for r in self.rows if r.info and r.status in ("different", "error")), None)

    @property
    def ok(self) -> bool:
        """True when nothing differs and nothing fails."""
        return all(r.status not in ("different", "error") for r in self.rows)


def _compare(
    piece: PieceInfo, pieces: Pieces, engine: ChatEngine, refs: Callable[[], list[Reference]]
) -> Outcome:
    if piece.key in MODEL_PIECES:
        return compare_model(pieces, engine.model, engine.tokenizer, refs())
    if piece.key == "sampling":
        return compare_sampling(pieces, refs())
    if piece.key == "bpe":
        assert isinstance(engine.tokenizer, BPETokenizer)
        return compare_bpe(pieces, engine.tokenizer)
    if piece.key == "format":
        return compare_format(pieces, engine)
    return compare_http(pieces, engine)


def _run(compare: Callable[[], Outcome]) -> Outcome:
    """`compare()`, a failure of the student's code reported as an "error" outcome."""
    try:
        return compare()
    except PieceError as e:
        return Outcome("error", tr(f"出错：{e}", f"error: {e}"))
    except Exception as e:  # the student's code raised inside a comparison
        why = f"{type(e).__name__}: {str(e)[:200]}"
        return Outcome("error", tr(f"出错：{why}", f"error: {why}"))


def _together(engine: ChatEngine, pieces: Pieces) -> CheckRow:
    """Every written piece at once: greedy replies against the framework's."""
    failures: list[PieceError] = []
    mine = MineEngine(engine, pieces, on_fallback=failures.append)
    settings = ReplySettings(temperature=0.0, max_tokens=REPLY_TOKENS)
    for prompt in PROMPTS:
        want = engine.reply("", [("user", prompt)], settings).text
        got = mine.reply("", [("user", prompt)], settings).text
        if failures:
            return CheckRow(
                None,
                "error",
                tr(f"出错（已换回框架）：{failures[0]}", f"error (fell back): {failures[0]}"),
            )
        if got != want:
            return CheckRow(
                None,
                "different",
                tr(
                    f"对「{prompt}」的回复：你的 {got!r:.60}，框架 {want!r:.60}",
                    f"reply to {prompt!r}: yours {got!r:.60}, framework {want!r:.60}",
                ),
            )
    shown = " | ".join(PROMPTS)
    return CheckRow(
        None,
        "same",
        tr(
            f"贪心回复与框架完全相同（{shown}）",
            f"greedy replies identical to the framework's ({shown})",
        ),
    )


def run_check(engine: ChatEngine, progress: Callable[[str], object] | None = None) -> CheckReport:
    """Compare every written piece with the framework on `engine`'s model.

    Args:
        engine: the framework's chat engine over the model to check with.
        progress: told the name of each piece as its comparison starts.
    """
    infos = {info.id: info for info in all_labs()}
    labs = {p.lab for p in CATALOGUE} & set(infos)
    files = {lab: read_lab_file(infos[lab]) for lab in labs}
    loaded = {lab: load_lab_module(infos[lab]) for lab in labs if not files[lab].error}
    cached: list[Reference] = []

    def refs() -> list[Reference]:
        if not cached:
            cached.extend(references(engine, PROMPTS))
        return cached

    report, everything = CheckReport(), Pieces()
    for piece in CATALOGUE:
        if piece.key == "bpe" and not isinstance(engine.tokenizer, BPETokenizer):
            report.rows.append(CheckRow(piece, "n/a", tr("模型用字节 Tokenizer", "byte tokenizer")))
            continue
        why = not_ready(piece, files.get(piece.lab), None)
        functions: dict[str, Any] = {}
        if why is None:
            functions, why = imported_functions(piece, loaded[piece.lab])
        if why is not None:
            report.rows.append(CheckRow(piece, "not written", why))
            continue
        if progress is not None:
            progress(piece.title.en)
        alone = Pieces().with_piece(piece.key, functions)
        outcome = _run(partial(_compare, piece, alone, engine, refs))
        report.rows.append(CheckRow(piece, outcome.status, outcome.detail))
        everything = everything.with_piece(piece.key, functions)
    if everything.mine:
        report.rows.append(_together(engine, everything))
    return report


_STATUS = {
    "same": ("一致", "same", "green"),
    "different": ("不一致", "DIFFERENT", "red"),
    "error": ("出错", "ERROR", "red"),
    "not written": ("未写", "not written", "dim"),
    "n/a": ("—", "—", "dim"),
}


def print_check(report: CheckReport, lang: Lang, file: TextIO) -> None:
    """The table, then the first divergence and the lab to revisit."""
    import os

    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text as RichText

    tty = file.isatty() and not os.environ.get("NO_COLOR")
    console = Console(file=file, highlight=False, no_color=not tty, width=None if tty else 120)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for head in (
        ("部件", "实验", "结果", "细节") if lang == "zh" else ("piece", "lab", "result", "detail")
    ):
        table.add_column(head, overflow="fold")
    for row in report.rows:
        zh, en, style = _STATUS[row.status]
        title = (
            row.info.title.pick(lang) if row.info else tr("全部你的部件", "all of yours").pick(lang)
        )
        state = RichText(zh if lang == "zh" else en, style=style)
        table.add_row(title, row.info.lab if row.info else "", state, row.detail.pick(lang))
    console.print(table)
    first = report.first
    if first is not None and first.info is not None:
        lab = first.info.lab
        from grader.student.commands import verify_command

        run = verify_command(lab)  # a command that runs from where the student is
        again = tr(
            f"第一个不一致的部件：{first.info.title.zh}（{lab}）。回到 {lab}：读 "
            f"labs/{lab}/TASK.md，再运行 {run}。",
            f"First divergence: {first.info.title.en} ({lab}). Revisit {lab}: read "
            f"labs/{lab}/TASK.en.md, then run {run}.",
        )
        console.print(again.pick(lang))
    elif report.ok and any(r.status == "same" for r in report.rows):
        console.print(
            tr(
                "你写的每个部件都与框架一致。", "Every piece you wrote reproduces the framework."
            ).pick(lang)
        )
    else:
        console.print(tr("还没有可以比较的部件。", "No piece of yours to compare yet.").pick(lang))
