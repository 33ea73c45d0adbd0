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
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass

__all__ = ["eval_command"]


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
    from grader.product.data import encode_corpus
    from grader.product.scoring import course_corpus, load_scored, score_lines, window

    set_blas_threads(threads)
    try:
        model, tok = load_scored(model_path)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    corpus = course_corpus()
    tick = time.perf_counter()
    seq = window(model.config)
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
