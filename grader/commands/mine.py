"""`minillm mine [--check]`, and the `--mine` / `--force-mine` flags of chat, serve, generate.

    minillm chat --mine          # the course's model, running your code where your labs pass
    minillm mine                 # only the table: which pieces are yours, and why
    minillm mine --check         # your pieces against the framework's, piece by piece

With `--mine` each piece a lab covers (softmax, attention scores and mask, LayerNorm,
residual, block, sampling, KV cache, BPE encoding, chat format, HTTP) runs your function
from ``labs/*/student.py`` when its lab passes and a short timing probe finds it fast
enough; otherwise the framework's. A table at start-up says which and why. `--force-mine`
also runs your code whose lab does not pass yet or that is slow. `mine --check` runs the
model both ways on fixed prompts and names the first piece whose output differs. Exit
status of `--check`: 0 when everything you wrote reproduces the framework, 1 otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.commands.options import model_options, open_engine
from grader.i18n import LANGS, Lang
from grader.mine.cli import lang_of

__all__ = ["mine"]


@click.command("mine")
@model_options
@click.option("--check", is_flag=True, help="Compare each of your pieces with the framework's.")
@click.option(
    "--force-mine", is_flag=True, help="In the table: count code that does not pass or is slow."
)
@click.option("--lang", type=click.Choice(LANGS), default=None, help="Language of the report.")
def mine(
    model_path: Path | None, vocab: Path | None, check: bool, force_mine: bool, lang: Lang | None
) -> None:
    """Which pieces of the model run your code (--check: do they match the framework's?)."""
    from grader.render.term import prepare

    out = prepare(sys.stdout)
    chosen = lang or lang_of(out)
    engine = open_engine(model_path, vocab)
    if not check:
        from grader.mine.banner import print_selection
        from grader.mine.choose import select_pieces

        selection = select_pieces("serve", engine.model, engine.tokenizer, force=force_mine)
        print_selection(selection, chosen, out, title="minillm mine")
        return
    from grader.mine.check import print_check, run_check

    def step(name: str) -> None:
        click.echo(f"  {name} ...", err=True)

    click.echo("comparing your pieces with the framework's ...", err=True)
    report = run_check(engine, progress=step)
    print_check(report, chosen, out)
    sys.exit(0 if report.ok else 1)
