"""`minillm completion SHELL`: print the shell code that completes commands and lab names.

    eval "$(minillm completion bash)"     # in ~/.bashrc
    eval "$(minillm completion zsh)"      # in ~/.zshrc
    minillm completion fish > ~/.config/fish/completions/minillm.fish

It is click's own completion, so it always matches the installed commands.
"""

from __future__ import annotations

import click

__all__ = ["completion"]


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish)."""
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships all three
        raise click.UsageError(f"no completion for {shell}")
    root = ctx.find_root()  # the command it was called from: `minillm` itself
    name = root.info_name or "minillm"
    click.echo(cls(root.command, {}, name, "_MINILLM_COMPLETE").source())
