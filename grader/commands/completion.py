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
def completion(shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish)."""
    from click.shell_completion import get_completion_class

    from grader.cli import cli

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships all three
        raise click.UsageError(f"no completion for {shell}")
    click.echo(cls(cli, {}, "minillm", "_MINILLM_COMPLETE").source())
