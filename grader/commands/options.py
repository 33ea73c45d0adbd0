"""Click parts that several commands share: the MODEL argument, lab-name completion.

`model_options` adds the ``[MODEL]`` argument and ``--vocab`` to a command, and `open_engine`
turns them into a `ChatEngine` (`grader.product.engine`) or a one-line error.
`complete_lab` completes lab ids in the shell.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from framework.serving import ChatEngine

__all__ = ["complete_lab", "model_options", "open_engine"]

_FILE = click.Path(dir_okay=False, path_type=Path)


def model_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The MODEL argument and the --vocab option of `chat`, `generate`, `serve`, `mine`."""
    f = click.option(
        "--vocab",
        "--tokenizer",
        "vocab",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help="BPE vocabulary of the model (default: the one its .meta.json sidecar names, "
        "else MODEL.vocab.json beside it, else bytes).",
    )(f)
    return click.argument("model_path", metavar="[MODEL]", required=False, type=_FILE)(f)


def open_engine(model_path: Path | None, vocab: Path | None) -> ChatEngine:
    """The model's `ChatEngine`, or a `click.ClickException` that says what to do."""
    from grader.product.engine import EngineUnavailable, load_engine

    command = click.get_current_context().info_name or "chat"
    try:
        return load_engine(model_path, vocab, command)
    except EngineUnavailable as e:
        raise click.ClickException(str(e)) from None


def complete_lab(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Lab ids that start with what was typed (shell completion)."""
    from grader.labs import all_labs

    return [i.id for i in all_labs() if i.id.startswith(incomplete)]
