"""`minillm watch LAB`: verify again every time student.py is saved.

The screen is cleared and the latest report stays visible; one key does the rest:
`h` shows the next hint for the first failing test, `r` runs again, `q` quits. Changes are
seen through `watchfiles` when it is installed and file events arrive; `--poll` (or a
missing `watchfiles`) checks the file's size, time and content instead, which also works on
network and WSL drives where events never come.
"""

from __future__ import annotations

import hashlib
import queue
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

import click

from grader.commands.options import complete_lab
from grader.i18n import LANGS, Lang, default_lang

__all__ = ["watch"]


def _fingerprint(path: Path) -> bytes:
    try:
        return hashlib.sha256(path.read_bytes()).digest()
    except OSError:
        return b""


def _poll(path: Path, interval: float, events: queue.Queue[str], stop: threading.Event) -> None:
    """Put "change" on `events` whenever the file's content changes."""
    last = _fingerprint(path)
    stamp = None
    while not stop.wait(interval):
        try:
            st = path.stat()
            now = (st.st_mtime_ns, st.st_size)
        except OSError:
            now = None
        if now == stamp:
            continue
        stamp = now
        current = _fingerprint(path)
        if current != last:
            last = current
            events.put("change")


def _events(path: Path, events: queue.Queue[str], stop: threading.Event) -> bool:
    """Watch with file events; False when watchfiles is not installed."""
    try:
        from watchfiles import watch as fs_watch  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return False

    def run() -> None:
        last = _fingerprint(path)
        for _ in fs_watch(path.parent, stop_event=stop, yield_on_timeout=False):
            current = _fingerprint(path)
            if current != last:
                last = current
                events.put("change")

    threading.Thread(target=run, daemon=True).start()
    return True


def _keys(stream: TextIO, events: queue.Queue[str]) -> None:
    """Put each key typed (or each character piped in) on `events`."""
    if stream.isatty() and sys.platform == "win32":
        import msvcrt

        while True:
            events.put("key:" + msvcrt.getwch().lower())
    while True:
        ch = stream.read(1)
        if not ch:
            return  # no more input: keep watching the file
        if not ch.isspace():
            events.put("key:" + ch.lower())


class _Cbreak:
    """Single keys without Enter on a POSIX terminal; nothing elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.saved: Any = None  # termios attributes

    def __enter__(self) -> None:
        if sys.platform != "win32" and self.stream.isatty():
            import termios
            import tty

            self.saved = termios.tcgetattr(self.stream.fileno())
            tty.setcbreak(self.stream.fileno())

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            import termios

            termios.tcsetattr(self.stream.fileno(), termios.TCSADRAIN, self.saved)


@click.command()
@click.argument("lab", shell_complete=complete_lab)
@click.option("--poll", is_flag=True, help="Poll the file instead of waiting for file events.")
@click.option(
    "--interval", type=click.FloatRange(0.05, 10), default=0.5, help="Polling period (s)."
)
@click.option("--lang", type=click.Choice(LANGS), default=None, help="Report language.")
def watch(lab: str, poll: bool, interval: float, lang: Lang | None) -> None:
    """Run LAB's checks each time its student.py is saved (h hint, r rerun, q quit)."""
    from grader.labs import UnknownLab, load_lab, resolve_lab
    from grader.render.lab import print_report
    from grader.render.term import prepare
    from grader.results import Status
    from grader.runner import run_lab
    from grader.sandbox.client import Sandbox
    from grader.student.commands import hint_command

    out = prepare(sys.stdout)
    chosen = lang or default_lang(getattr(out, "encoding", None))
    zh = chosen == "zh"
    try:
        info = resolve_lab(lab)
    except UnknownLab as e:
        raise click.UsageError(str(e)) from None
    events: queue.Queue[str] = queue.Queue()
    stop = threading.Event()
    if poll or not _events(info.student, events, stop):
        threading.Thread(
            target=_poll, args=(info.student, interval, events, stop), daemon=True
        ).start()
    threading.Thread(target=_keys, args=(sys.stdin, events), daemon=True).start()
    footer = (
        f"监视 {info.student} 中 — h 提示 · r 重新运行 · q 退出"
        if zh
        else f"watching {info.student} — h hint · r rerun · q quit"
    )
    hint_level = 0
    sandbox = Sandbox()
    sandbox.start()
    try:
        with _Cbreak(sys.stdin):
            while True:
                if out.isatty():
                    click.clear()
                else:
                    click.echo("\n" + "-" * 40)
                result = run_lab(info, info.student, sandbox, load_lab(info))
                print_report(result, chosen, file=out, hint_for=lambda n: hint_command(info.id, n))
                click.echo(footer)
                hint_level = 0
                while True:
                    event = events.get()
                    if event == "change" or event == "key:r":
                        break
                    if event == "key:q":
                        return
                    if event == "key:h":
                        hint_level += 1
                        _show_hint(result, load_lab(info), hint_level, chosen)
                        if result.tests and all(t.status is Status.PASS for t in result.tests):
                            continue
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        sandbox.close()


def _show_hint(result: object, lab: object, level: int, lang: Lang) -> None:
    from grader.dsl import Lab, hint_levels
    from grader.results import LabResult, Status

    assert isinstance(result, LabResult) and isinstance(lab, Lab)
    zh = lang == "zh"
    test = next((t for t in result.tests if t.status is not Status.PASS), None)
    if test is None:
        click.echo("全部通过！" if zh else "Everything passes!")
        return
    hints = next((c.hints for c in test.checks if c.hints), None) or hint_levels(
        next(s for s in lab.tests if s.id == test.id).hint
    )
    if not hints:
        click.echo(
            f"[TEST {test.number}] 没有提示：请读 TASK.md 的对应小节"
            if zh
            else f"[TEST {test.number}] has no hints: read its section of TASK.en.md"
        )
        return
    shown = hints[: min(level, len(hints))]
    for n, h in enumerate(shown, 1):
        label = f"提示 {n}/{len(hints)}" if zh else f"hint {n}/{len(hints)}"
        click.echo(f"[TEST {test.number}] {label}: {h.pick(lang)}")
