"""`minillm eval MODEL`: validation loss and exact-match accuracy on held-out questions.

    minillm eval minillm-default.bin
    minillm eval minillm-default.bin --show 10     # also list ten wrong answers
    minillm eval framework/data/chat_model.bin     # a BPE checkpoint: its sidecar's vocabulary

A model with a sidecar (``<model>.meta.json``, written by ``minillm train --tokenizer bpe``
and ``make model``) is read with the BPE vocabulary the sidecar names, and its validation
stream is the one such a run trains on; a plain model file is byte-level.

The validation loss is measured on the corpus's validation dialogues (fixed windows). Two
sets of arithmetic questions are answered greedily and compared exactly with their
canonical answers (``3 + 4 = 7``): known sums asked with phrasings never used for them in
training, and sums that no training dialogue contains.
"""

from __future__ import annotations

import math
import time
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from framework.corpus import Corpus
    from framework.evaluate import ExactMatch

__all__ = ["course_corpus", "eval_command", "score_lines"]


@click.command("eval")
@click.argument(
    "model_path", metavar="MODEL", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--show",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Wrong answers to list.",
)
@click.option(
    "--threads", type=click.IntRange(min=1), default=1, show_default=True, help="BLAS threads."
)
def eval_command(model_path: Path, show: int, threads: int) -> None:
    """Report MODEL's validation loss and its exact-match score on held-out questions."""
    import numpy as np

    from framework.blas import set_blas_threads
    from framework.train import evaluate_loss
    from grader.commands.training_data import encode_corpus

    set_blas_threads(threads)
    model, tok = _load(model_path)
    corpus = course_corpus()
    tick = time.perf_counter()
    seq = _window(model.config)
    val_ids = encode_corpus(corpus, tok)[1]  # (N,) the validation stream, as trained on
    starts = np.flatnonzero(val_ids == tok.bos_id)  # windows open where dialogues do
    val = evaluate_loss(model, val_ids, 16, seq, max_batches=50, starts=starts)
    click.echo(f"{model_path}: {model.num_parameters():,} parameters")
    click.echo(f"  val loss {val:.4f} (perplexity {math.exp(val):.2f})")
    for line, score in score_lines(model, tok, corpus):
        click.echo(line)
        for question, want, got in score.failures[:show]:
            click.echo(f"      ✗ {question!r}: expected {want!r}, got {got!r}")
    click.echo(f"  ({time.perf_counter() - tick:.1f}s)")


def _load(model_path: Path) -> tuple[Any, Any]:
    """The model and its tokenizer: a checkpoint's BPE vocabulary (its sidecar beside it),
    else the byte tokenizer. Raises `click.UsageError` for a file that does not fit."""
    from framework.model import model_load
    from framework.shipped import load_checkpoint, meta_path
    from framework.tokenizer import ByteTokenizer

    sidecar = meta_path(model_path)
    try:
        if sidecar.is_file():
            return load_checkpoint(model_path)
        model = model_load(model_path)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    tok = ByteTokenizer()
    if model.config.vocab_size != tok.vocab_size:
        raise click.UsageError(
            f"{model_path} has vocab {model.config.vocab_size}, not the byte tokenizer's "
            f"{tok.vocab_size}, and no sidecar {sidecar.name} names its BPE vocabulary"
        )
    return model, tok


def _window(config: Any) -> int:
    """The window length of the preset that trained a model of this size (else 96)."""
    from framework.train import PRESETS
    from grader.commands.training_run import MODEL_CONFIGS

    for name, make in MODEL_CONFIGS.items():
        if make() == config:
            return min(PRESETS[name].seq_len, int(config.max_seq_len))
    return min(96, int(config.max_seq_len))


@cache
def course_corpus() -> Corpus:
    """The course's corpus (`build_corpus()` with its defaults), built once per process."""
    from framework.corpus import build_corpus

    return build_corpus()


def score_lines(model: Any, tok: Any, corpus: Any) -> list[tuple[str, ExactMatch]]:
    """The exact-match lines of the two held-out sets (and their scores)."""
    from framework.evaluate import exact_match

    out = []
    sets = (
        ("held-out questions (known sums, new phrasings)", corpus.heldout),
        ("unseen sums (in no training dialogue)         ", corpus.unseen),
    )
    for name, questions in sets:
        score = exact_match(model, tok, questions, model.config.max_seq_len)
        langs = ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(score.by_lang.items()))
        line = f"  {name}: {score.accuracy:6.1%} ({score.correct}/{score.total}; {langs})"
        out.append((line, score))
    return out
