"""Which pieces run the student's code, and why: the table `--mine` starts with.

For each piece of `CATALOGUE` that the command uses, in order, then lab13's whole turn
(`TURN`, chat only, not timed):

1. the lab must be in the course, and every function of the piece must be in its
   ``student.py`` and written (no ``raise NotImplementedError`` left): read from the file,
   which is imported only when its code is to run;
2. the lab's checks must all pass: the verdicts of `minillm status`
   (`grader.student.progress`, remembered per file content, so usually nothing runs again);
3. a short timing probe must find it fast enough to chat with (`grader.mine.probe`).

A piece that fails 1 runs the framework's code. `force` (``--force-mine``) lets the
student's code run although its lab does not pass yet or the probe found it slow; a
function that raises on a valid input still falls back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from framework.bpe_tokenizer import BPETokenizer
from framework.model import GPTModel
from grader.i18n import Text, tr
from grader.labs import LabInfo, all_labs
from grader.mine.load import LabFile, LoadedLab, load_lab_module, read_lab_file
from grader.mine.pieces import CATALOGUE, TURN, PieceInfo, Pieces, guard
from grader.mine.probe import SLOW_SECONDS, ProbeResult, probe_piece
from grader.student.progress import LabProgress

__all__ = [
    "Choice",
    "Selection",
    "imported_functions",
    "lab_verdicts",
    "not_ready",
    "select_pieces",
    "student_functions",
]


@dataclass
class Choice:
    """One row of the table: a piece, whose code runs it, and why."""

    info: PieceInfo
    state: str  # "yours", "framework" or "unused"
    reason: Text
    seconds: float | None = None  # the probe's estimate per reply, when probed


@dataclass
class Selection:
    """The table, and the functions the product runs with."""

    command: str
    choices: list[Choice]
    pieces: Pieces
    force: bool = False
    notes: list[Text] = field(default_factory=list)

    def state(self, key: str) -> str:
        """ "yours", "framework" or "unused" for piece `key`."""
        return next(c.state for c in self.choices if c.info.key == key)


def lab_verdicts(labs: Iterable[LabInfo]) -> dict[str, LabProgress]:
    """Each lab's verdict for its current student.py (cached; runs only what changed)."""
    from grader.student.progress import course_progress

    return {p.lab: p for p in course_progress(list(labs))}


def student_functions(piece: PieceInfo, lab: LoadedLab) -> dict[str, Any]:
    """The piece's functions from the student's module, guarded (missing ones left out)."""
    path = lab.info.student.resolve()
    found = {name: lab.function(name) for name in piece.functions}
    return {n: guard(piece.key, n, fn, path) for n, fn in found.items() if fn is not None}


def _applies(piece: PieceInfo, command: str, tok: Any) -> Text | None:
    """Why `piece` is not used by `command` with this tokenizer, or None when it is."""
    if command not in piece.commands:
        if piece.commands == {"serve"}:
            return tr("只在 minillm serve 中使用", "used by minillm serve only")
        if piece.commands == {"chat"}:
            return tr(
                "只在 minillm chat 中使用（一条用户消息进、一条回复出）",
                "used by minillm chat only (one user message in, one reply out)",
            )
        return tr("只在 chat 和 serve 中使用", "used by chat and serve only")
    if piece.key in ("bpe", "turn") and not isinstance(tok, BPETokenizer):
        return tr("模型用字节 Tokenizer", "the model uses the byte tokenizer")
    return None


def not_ready(piece: PieceInfo, file: LabFile | None, verdict: LabProgress | None) -> Text | None:
    """Why the student's code cannot run this piece at all (step 1), or None.

    Read from the file without running it.
    """
    if file is None:
        return tr(f"课程里还没有 {piece.lab}", f"{piece.lab} is not in this course yet")
    if file.error:
        return tr(f"student.py 无法导入：{file.error}", f"student.py does not import: {file.error}")
    missing = file.missing(piece.functions)
    if missing:
        names = ", ".join(missing)
        return tr(f"student.py 里没有 {names}", f"{names} missing from student.py")
    stubs = file.stubs(piece.functions)
    if stubs or (verdict is not None and verdict.todo):
        names = ", ".join(stubs) or piece.lab
        return tr(f"{names} 还没写", f"{names} not written yet")
    return None


def imported_functions(piece: PieceInfo, lab: LoadedLab) -> tuple[dict[str, Any], Text | None]:
    """The piece's guarded functions from the imported module, or why there are none."""
    if lab.module is None:
        return {}, tr(
            f"student.py 无法导入：{lab.error}", f"student.py does not import: {lab.error}"
        )
    functions = student_functions(piece, lab)
    missing = [n for n in piece.functions if n not in functions]
    if missing:
        names = ", ".join(missing)
        return {}, tr(f"{names} 不是函数", f"{names} is not a function")
    return functions, None


def _passing(piece: PieceInfo, verdict: LabProgress | None) -> tuple[bool, Text]:
    if verdict is None:
        return False, tr(f"{piece.lab} 没有结果", f"no verdict for {piece.lab}")
    score = f"{verdict.tests_passed}/{verdict.tests_total}"
    if verdict.done:
        return True, tr(f"{piece.lab} 全部通过（{score}）", f"{piece.lab} passes ({score} tests)")
    return False, tr(
        f"{piece.lab} 未通过：{score} 个测试", f"{piece.lab} not passing: {score} tests"
    )


def _timing(probe: ProbeResult, piece: PieceInfo, budget: float) -> Text:
    if not probe.slow:
        ms = f"{probe.seconds * 1e3:.0f} ms"
        return tr(f"每次回复约 {ms}", f"~{ms} per reply")
    s = f"{probe.seconds:.1f} s" if not probe.cut else f"> {probe.seconds:.1f} s"
    n = f"{probe.seconds / probe.framework:.0f}" if probe.framework else ""
    zh = f"是框架的 {n} 倍" if n else "远慢于框架"
    en = f"{n}× the framework's" if n else "far slower than the framework's"
    return tr(
        f"太慢：每次回复约 {s}，{zh}（上限 {budget:g} s；{probe.slowest}）。提示：{piece.hint.zh}",
        f"too slow: ~{s} per reply, {en} (budget {budget:g} s; {probe.slowest}). "
        f"Hint: {piece.hint.en}",
    )


def _decide(
    piece: PieceInfo,
    file: LabFile | None,
    load: Callable[[], LoadedLab],
    verdict: LabProgress | None,
    force: bool,
    probe: Callable[[Pieces], ProbeResult] | None,
    budget: float,
) -> tuple[Choice, dict[str, Any]]:
    """The row for one piece, and the student's functions when they are to run."""
    why = not_ready(piece, file, verdict)
    if why is not None:
        return Choice(piece, "framework", why), {}
    ok, verdict_text = _passing(piece, verdict)
    if not ok and not force:
        return Choice(piece, "framework", verdict_text), {}
    lab = load()
    functions, why = imported_functions(piece, lab)
    if why is not None:
        return Choice(piece, "framework", why), {}
    forced = tr("强制使用；", "forced; ") if not ok else tr("", "")
    if probe is None:
        return Choice(piece, "yours", forced + verdict_text), functions
    found = probe(Pieces().with_piece(piece.key, {n: lab.function(n) for n in functions}))
    if found.stub:
        why = tr(f"{found.stub} 还没写", f"{found.stub} not written yet")
        return Choice(piece, "framework", why), {}
    if found.error:
        why = tr(f"在正常输入上出错：{found.error}", f"fails on a valid input: {found.error}")
        return Choice(piece, "framework", why), {}
    timing = _timing(found, piece, budget)
    if found.slow and not force:
        more = tr("；--force-mine 仍会使用它", "; --force-mine uses it anyway")
        return Choice(piece, "framework", timing + more, found.seconds), {}
    forced = tr("强制使用；", "forced; ") if (found.slow or not ok) else tr("", "")
    return Choice(piece, "yours", forced + verdict_text + " · " + timing, found.seconds), functions


def select_pieces(
    command: str,
    model: GPTModel,
    tokenizer: Any,
    *,
    force: bool = False,
    verdicts: dict[str, LabProgress] | None = None,
    probe: bool = True,
    budget: float = SLOW_SECONDS,
) -> Selection:
    """Decide every piece for `command` ("chat", "serve" or "generate").

    Args:
        command: which product runs (a piece it does not use is "unused").
        model, tokenizer: what will run (the probe uses their sizes).
        force: run the student's written code even if its lab does not pass or it is slow.
        verdicts: lab id → progress; None asks `grader.student.progress` (may run verify).
        probe: time each piece that is to run (off: no timing, nothing too slow).
        budget: seconds per typical reply above which a piece is too slow.
    """
    infos = {info.id: info for info in all_labs()}
    catalogue = (*CATALOGUE, TURN)  # TURN: lab13's whole turn, not timed (it is the reply)
    used = [p for p in catalogue if _applies(p, command, tokenizer) is None]
    labs = sorted({p.lab for p in used if p.lab in infos})
    if verdicts is None:
        verdicts = lab_verdicts(infos[lab] for lab in labs)
    files = {lab: read_lab_file(infos[lab]) for lab in labs}
    loaded: dict[str, LoadedLab] = {}

    def load(lab: str) -> LoadedLab:  # imported only when its code is to run
        if lab not in loaded:
            loaded[lab] = load_lab_module(infos[lab])
        return loaded[lab]

    pieces, choices = Pieces(), []
    for piece in catalogue:
        unused = _applies(piece, command, tokenizer)
        if unused is not None:
            choices.append(Choice(piece, "unused", unused))
            continue

        def run_probe(p: Pieces, key: str = piece.key) -> ProbeResult:
            return probe_piece(key, model, tokenizer, p, budget)

        choice, functions = _decide(
            piece,
            files.get(piece.lab),
            partial(load, piece.lab),
            verdicts.get(piece.lab),
            force,
            run_probe if probe and piece is not TURN else None,
            budget,
        )
        if functions:
            pieces = _with(pieces, piece, functions)
        if piece is TURN and choice.state == "yours":
            choice.reason = choice.reason + tr(
                " · 回答第一轮（之后的轮次带着历史，超出 chat_one_turn 的约定）",
                " · answers the first turn (later ones carry history, outside its contract)",
            )
        choices.append(choice)
    return Selection(command, choices, pieces, force)


def _with(pieces: Pieces, piece: PieceInfo, functions: dict[str, Any]) -> Pieces:
    """`pieces` with `piece` the student's (only the functions a run calls are swapped)."""
    return pieces.with_piece(piece.key, functions)
