"""Loading the chat model that `minillm chat`, `generate`, `serve` and `mine` run.

One typed helper for all of them: `load_engine` returns the `ChatEngine` of a model file
and its vocabulary, or, without a file, of the model that ships with the course. What can
go wrong (no shipped model, no such file, a file or vocabulary that does not fit) is an
`EngineUnavailable` whose message says what to do; the commands show it in one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from framework.serving import ChatEngine

__all__ = ["EngineUnavailable", "load_engine"]


class EngineUnavailable(ValueError):
    """The model cannot be loaded (the message says why and what to do)."""


def load_engine(model_path: Path | None, vocab: Path | None, command: str = "chat") -> ChatEngine:
    """The `ChatEngine` for `model_path` (None: the shipped model) and its vocabulary.

    `command` names the command in the advice of a message (``minillm chat model.bin``).

    Raises:
        EngineUnavailable: no model file there, or one that cannot be loaded.
    """
    from framework.serving import load_chat_model, shipped_model

    if model_path is None:
        model_path, shipped_vocab = shipped_model()
        if not model_path.is_file():
            raise EngineUnavailable(
                f"no MODEL given, and the course's model ({model_path}) is not installed.\n"
                "Train one with `minillm train` (see `minillm train --help`), then pass its "
                f"file: `minillm {command} path/to/model.bin` (add --vocab FILE for a BPE model)."
            )
        vocab = vocab or (shipped_vocab if shipped_vocab.is_file() else None)
    if not model_path.is_file():
        raise EngineUnavailable(f"no such model file: {model_path}")
    try:
        return load_chat_model(model_path, vocab)
    except (OSError, ValueError) as e:
        raise EngineUnavailable(f"cannot load the model: {e}") from None
