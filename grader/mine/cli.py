"""The `--mine` and `--force-mine` flags, shared by `minillm chat`, `serve` and `generate`.

`mine_options` adds the flags to a click command; `mine_selection` decides the pieces
and prints the table; `mine_engine` wraps a chat engine so that it answers through them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

import click

from grader.i18n import Lang, default_lang

if TYPE_CHECKING:
    from framework.serving import ChatEngine
    from grader.mine.engine import MineEngine

__all__ = ["lang_of", "mine_engine", "mine_generate", "mine_options", "mine_selection", "notice"]


def mine_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The --mine and --force-mine flags shared by chat, serve and generate."""
    f = click.option(
        "--force-mine",
        is_flag=True,
        help="With --mine: also your code whose lab does not pass yet, or that is slow.",
    )(f)
    return click.option(
        "--mine",
        is_flag=True,
        help="Run your own functions from labs/*/student.py wherever your lab passes.",
    )(f)


def lang_of(out: TextIO) -> Lang:
    """The language for `out` (MINILLM_LANG, the locale, and whether it can show Chinese)."""
    return default_lang(getattr(out, "encoding", None))


def mine_selection(command: str, model: Any, tokenizer: Any, force: bool, out: TextIO) -> Any:
    """Decide the pieces for `command` and print the table to `out`; the `Selection`."""
    from grader.mine.banner import print_selection
    from grader.mine.choose import select_pieces
    from grader.render.term import prepare

    out = prepare(out)
    lang = lang_of(out)
    click.echo("正在检查你的实验……" if lang == "zh" else "checking your labs ...", file=out)
    selection = select_pieces(command, model, tokenizer, force=force)
    title = f"minillm {command} --mine" + (" --force-mine" if force else "")
    print_selection(selection, lang, out, title=title)
    return selection


def notice(error: Any) -> None:
    """Say on stderr that a piece of the student's failed and the framework's took over."""
    click.echo(f"\n[{error}; the framework's version runs from now on]", err=True)


def mine_engine(engine: ChatEngine, command: str, force: bool) -> MineEngine:
    """`engine` answering through the student's pieces (table printed to stdout)."""
    from grader.mine.engine import MineEngine

    selection = mine_selection(command, engine.model, engine.tokenizer, force, sys.stdout)
    return MineEngine(engine, selection.pieces, on_fallback=notice)


def mine_generate(model: Any, tok: Any, force: bool) -> Callable[..., Any]:
    """A `framework.generate.generate` look-alike running the student's pieces.

    The table is printed to stderr (stdout is the generated text).
    """
    from grader.mine.engine import generate_mine

    selection = mine_selection("generate", model, tok, force, sys.stderr)

    def run(model: Any, tok: Any, text: str, config: Any, on_text: Any = None) -> Any:
        return generate_mine(selection.pieces, model, tok, text, config, on_text, notice)

    return run
