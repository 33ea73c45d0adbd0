"""`minillm chat [MODEL]`: talk to a model in the terminal, the reply streaming as it is made.

    minillm chat                       # the model that ships with the course
    minillm chat model.bin --vocab model.vocab.json --temperature 0.7

Type a message and press Enter; the reply appears token by token after ``Bot:``. Commands
start with a slash: ``/help``, ``/temp 0.7``, ``/topk 40``, ``/len 64``, ``/system You are
brief.``, ``/reset``, ``/quit``. End of input (Ctrl-D) ends the chat too; Ctrl-C stops a
reply that is being written. The conversation is kept and trimmed from its oldest turns
to fit the model's context (`framework.serving.ChatEngine`).

Without MODEL the course's shipped model is used; a missing or malformed model file is
refused with a message that says what to do, never a traceback. With ``--mine`` the model
runs your own functions from the labs wherever your lab passes (`grader.commands.mine`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from grader.commands.options import model_options, open_engine
from grader.mine.cli import mine_options

__all__ = ["chat"]

HELP = """commands:
  /help            this list
  /temp [T]        show or set the temperature (0 = greedy)
  /topk [K]        show or set top-k (0 = no limit)
  /len [N]         show or set the most tokens of a reply
  /system [TEXT]   set the system prompt (no TEXT: remove it)
  /reset           forget the conversation (the system prompt stays)
  /quit            leave (Ctrl-D too)"""


def _number(arg: str, cast: Callable[[str], Any], low: float, what: str) -> Any:
    try:
        value = cast(arg)
    except ValueError:
        value = None
    if value is None or value < low:
        raise click.UsageError(f"{what} must be a number >= {low:g}, got {arg!r}")
    return value


def _command(line: str, state: dict[str, Any]) -> bool:
    """Run one slash command; False when the chat should end."""
    name, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    s = state["settings"]
    fields = {
        "temp": ("temperature", float, 0.0),
        "topk": ("top_k", int, 0),
        "len": ("max_tokens", int, 1),
    }
    if name in ("quit", "exit", "q"):
        return False
    if name == "help":
        click.echo(HELP)
    elif name in fields:
        attr, cast, low = fields[name]
        if arg:
            setattr(s, attr, _number(arg, cast, low, f"/{name}"))
        click.echo(f"{attr} = {getattr(s, attr)}")
    elif name == "system":
        state["system"] = arg
        click.echo(f"system prompt: {arg!r}" if arg else "system prompt removed")
    elif name == "reset":
        state["history"].clear()
        click.echo("conversation forgotten")
    else:
        click.echo(f"unknown command /{name}; /help lists them")
    return True


def _turn(engine: Any, state: dict[str, Any], text: str) -> None:
    """Answer one user message, streaming; Ctrl-C keeps what was written so far."""
    history: list[tuple[str, str]] = state["history"]
    history.append(("user", text))
    written: list[str] = []

    def show(piece: str) -> None:
        written.append(piece)
        sys.stdout.write(piece)
        sys.stdout.flush()

    click.echo("Bot: ", nl=False)
    try:
        reply = engine.reply(state["system"], history, state["settings"], on_text=show)
        history.append(("assistant", reply.text))
        click.echo()
    except KeyboardInterrupt:
        history.append(("assistant", "".join(written)))
        click.echo(" [stopped]")
    except ValueError as e:
        history.pop()
        click.echo()
        click.echo(f"error: {e}", err=True)


@click.command()
@model_options
@click.option("--system", default="", help="System prompt.")
@click.option("--temperature", "-t", type=click.FloatRange(min=0), default=0.8, show_default=True)
@click.option("--top-k", type=click.IntRange(min=0), default=40, show_default=True)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=64,
    show_default=True,
    help="Most tokens of one reply.",
)
@click.option("--seed", type=int, default=None, help="Seed of the sampler (default: fresh).")
@mine_options
def chat(
    model_path: Path | None,
    vocab: Path | None,
    system: str,
    temperature: float,
    top_k: int,
    max_tokens: int,
    seed: int | None,
    mine: bool,
    force_mine: bool,
) -> None:
    """Chat with MODEL in the terminal (default: the course's model)."""
    from framework.serving import ReplySettings

    engine = open_engine(model_path, vocab)
    if mine or force_mine:
        from grader.mine.cli import mine_engine

        engine = mine_engine(engine, "chat", force_mine)
    settings = ReplySettings(temperature, top_k, 1.0, max_tokens, seed)
    state: dict[str, Any] = {"settings": settings, "system": system, "history": []}
    click.echo(
        f"miniLLM chat with {engine.name} (context {engine.context} tokens). "
        "/help lists the commands, /quit or Ctrl-D leaves."
    )
    while True:
        try:
            line = input("> ").strip()
        except (EOFError, KeyboardInterrupt):
            click.echo()
            break
        try:
            if line.startswith("/"):
                if not _command(line, state):
                    break
            elif line:
                _turn(engine, state, line)
        except click.UsageError as e:
            click.echo(f"error: {e.message}", err=True)
