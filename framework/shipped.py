"""The course's own chat model, and checkpoints that keep a model and its vocabulary together.

A BPE model is two files: the weights (`model_save`'s lab06 format, which has no room for
anything else) and the vocabulary (`BPETokenizer.save`). A model only makes sense with
the vocabulary it was trained with: the same ids must mean the same text. So a checkpoint
here is three files::

    chat_model.bin        the weights, lab06 format
    chat_model.meta.json  the sidecar: the vocabulary's fingerprint, the weights' SHA-256,
                          how the model was made and what it scored
    chat_vocab.json       the vocabulary

`load_checkpoint` refuses a vocabulary whose fingerprint is not the one the sidecar
records, a sidecar that describes other weights, and a model whose vocab size is not the
tokenizer's, each with a message that says which file to fix. `load_shipped()` loads the
course's own model from `framework/data/`, which `make model` rebuilds
(`framework.shipped_train`); `minillm train --tokenizer bpe` writes checkpoints of the
same form, and `framework.serving.load_chat_model` loads any of them.

Not here: training (`framework.shipped_train`), generation (`framework.generate`).

Where the idea comes from: Hugging Face's ``config.json`` + ``tokenizer.json`` next to
the weights; the C course's `model_bpe.bin` + `bpe_vocab.txt` pair, which nothing checked.

Example:
    >>> model, tok = load_shipped()
    >>> model.config.vocab_size == tok.vocab_size
    True
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from framework.bpe_tokenizer import BPETokenizer
from framework.model import GPTModel, model_load, model_save

__all__ = [
    "DATA_DIR",
    "MODEL_FILE",
    "VOCAB_FILE",
    "CheckpointError",
    "load_checkpoint",
    "load_shipped",
    "meta_path",
    "read_meta",
    "save_checkpoint",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
MODEL_FILE = DATA_DIR / "chat_model.bin"
VOCAB_FILE = DATA_DIR / "chat_vocab.json"
_FORMAT, _VERSION = "minillm-checkpoint", 1


class CheckpointError(ValueError):
    """A model, sidecar and vocabulary that do not belong together (the message says why)."""


def meta_path(model_path: str | os.PathLike[str]) -> Path:
    """The sidecar of a model file: ``chat_model.bin`` → ``chat_model.meta.json``."""
    p = Path(model_path)
    return p.with_name(p.stem + ".meta.json")


def _sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def save_checkpoint(
    model: GPTModel,
    tok: BPETokenizer,
    model_path: str | os.PathLike[str],
    vocab_path: str | os.PathLike[str],
    info: dict[str, Any] | None = None,
) -> None:
    """Write the weights, the vocabulary and the sidecar that ties them together.

    Args:
        model: the trained model; its vocab size must be the tokenizer's.
        tok: the tokenizer it was trained with.
        model_path: the weights file (lab06 format); the sidecar goes beside it.
        vocab_path: the vocabulary file.
        info: more JSON-able facts for the sidecar (the recipe, scores, samples).

    Raises:
        CheckpointError: if the vocab sizes differ.
        OSError: if a file cannot be written.
    """
    if model.config.vocab_size != tok.vocab_size:
        raise CheckpointError(
            f"the model has {model.config.vocab_size} ids, the tokenizer {tok.vocab_size}"
        )
    model_save(model, model_path)
    tok.save(vocab_path)
    meta = {
        "format": _FORMAT,
        "version": _VERSION,
        "model_sha256": _sha256(Path(model_path)),
        "vocab_file": os.path.relpath(vocab_path, Path(model_path).parent),
        "vocab_fingerprint": tok.fingerprint(),
        **(info or {}),
    }
    text = json.dumps(meta, ensure_ascii=False, indent=1) + "\n"
    meta_path(model_path).write_text(text, encoding="utf-8")


def read_meta(model_path: str | os.PathLike[str]) -> dict[str, Any]:
    """The sidecar of `model_path`, checked against the weights file.

    Raises:
        CheckpointError: if the sidecar is missing, malformed, of another format, or
            describes other weights than `model_path`.
    """
    path = meta_path(model_path)
    if not path.is_file():
        raise CheckpointError(
            f"{model_path} has no sidecar {path.name}: without it nothing says which "
            "vocabulary the model was trained with (save it with save_checkpoint)"
        )
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: not JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise CheckpointError(f"{path}: not a {_FORMAT} sidecar")
    if meta.get("version") != _VERSION:
        raise CheckpointError(f"{path}: version {meta.get('version')!r}, this reader knows 1")
    for key in ("model_sha256", "vocab_file", "vocab_fingerprint"):
        if not isinstance(meta.get(key), str):
            raise CheckpointError(f"{path}: field {key!r} is missing or not a string")
    if meta["model_sha256"] != _sha256(Path(model_path)):
        raise CheckpointError(
            f"{path} describes other weights than {model_path} (SHA-256 differs): "
            "the model file was replaced without its sidecar"
        )
    return meta


def load_checkpoint(
    model_path: str | os.PathLike[str], vocab_path: str | os.PathLike[str] | None = None
) -> tuple[GPTModel, BPETokenizer]:
    """Load a model and its vocabulary, refusing a pair that does not belong together.

    Args:
        model_path: the weights file; its sidecar must be beside it.
        vocab_path: the vocabulary file (default: the one the sidecar names).

    Returns:
        (model, tokenizer).

    Raises:
        CheckpointError: for a missing or stale sidecar, a missing vocabulary file, a
            vocabulary with another fingerprint, or a vocab size that is not the model's.
        OSError: if a file cannot be read. ValueError: for a malformed file.
    """
    meta = read_meta(model_path)
    vocab = Path(vocab_path) if vocab_path else Path(model_path).parent / meta["vocab_file"]
    if not vocab.is_file():
        raise CheckpointError(
            f"{meta_path(model_path)} names the vocabulary {vocab}, which is not a file: "
            "put the model's vocabulary there, or give it (--vocab)"
        )
    tok = BPETokenizer.load(vocab)
    if tok.fingerprint() != meta["vocab_fingerprint"]:
        raise CheckpointError(
            f"{vocab} is not the vocabulary {model_path} was trained with: its fingerprint is "
            f"{tok.fingerprint()}, the model expects {meta['vocab_fingerprint']}"
        )
    model = model_load(model_path)
    if model.config.vocab_size != tok.vocab_size:
        raise CheckpointError(
            f"{model_path} has {model.config.vocab_size} ids but {vocab} has {tok.vocab_size}"
        )
    return model, tok


def load_shipped() -> tuple[GPTModel, BPETokenizer]:
    """The course's chat model and its tokenizer, from `framework/data/`.

    Raises:
        CheckpointError: if the files are missing or do not belong together
            (``make model`` rebuilds them).
    """
    if not MODEL_FILE.is_file() or not VOCAB_FILE.is_file():
        raise CheckpointError(
            f"the shipped model is missing ({MODEL_FILE.name}, {VOCAB_FILE.name} in "
            f"{DATA_DIR}); rebuild it with `make model`"
        )
    return load_checkpoint(MODEL_FILE, VOCAB_FILE)
