"""`minillm eval MODEL`: validation loss and the held-out figures (sums, chat, honesty).

    minillm eval                                   # the course's shipped model
    minillm eval minillm-default.bin
    minillm eval minillm-default.bin --show 10     # also list ten wrong answers
    minillm eval framework/data/chat_model.bin     # a BPE checkpoint: its sidecar's vocabulary

A model with a sidecar (``<model>.meta.json``, written by ``minillm train --tokenizer bpe``
and ``make model``) is read with the BPE vocabulary the sidecar names, and its validation
stream is the one such a run trains on; a plain model file is byte-level.

The validation loss is measured on the corpus's validation dialogues (fixed windows). For a
checkpoint whose sidecar records how it was made (``make model``), it is measured as that
run measured it (its validation stream, window length, batch size and number of batches),
so it is the sidecar's ``val_loss`` again; otherwise on up to 50 batches of 16 windows
that open where dialogues do.

Then every held-out set is answered greedily (`framework.evaluate.scorecard`), each on one
line with its share right, per language: three arithmetic sets compared exactly with
their canonical answers (``45 + 38 = 83``: known small sums asked with phrasings never
used for them in training, and unseen sums of two-digit and of small operands); course
questions and greetings asked in new ways; out-of-scope prompts in phrasings no training
dialogue uses, which must get the honest reply ("我只会做 0–99 的加减法、打招呼和回答本
课程的问题。"); a name given and then asked back, which must never get a sum; and last
the share of all those replies free of U+FFFD, the mark of a broken UTF-8 sequence.
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
    "model_path",
    metavar="[MODEL]",
    required=False,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
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
def eval_command(model_path: Path | None, show: int, threads: int) -> None:
    """Report MODEL's validation loss and its scores on the held-out questions.

    Without MODEL, the course's shipped model (as generate, chat and serve use)."""
    import numpy as np

    from framework.blas import set_blas_threads
    from framework.shipped import MODEL_FILE
    from framework.train import evaluate_loss
    from grader.product.data import encode_corpus
    from grader.product.scoring import (
        course_corpus,
        load_scored,
        recorded_validation,
        score_lines,
        window,
    )

    set_blas_threads(threads)
    model_path = model_path or MODEL_FILE
    try:
        model, tok = load_scored(model_path)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    corpus = course_corpus()
    tick = time.perf_counter()
    made = recorded_validation(model_path, tok)
    if made is not None:  # as the run that made it measured it: the sidecar's figure again
        val_ids, starts, batch, seq, batches, recorded = made
    else:
        val_ids = encode_corpus(corpus, tok)[1]  # (N,) the validation stream, as trained on
        starts = np.flatnonzero(val_ids == tok.bos_id)  # windows open where dialogues do
        batch, seq, batches, recorded = 16, window(model.config), 50, None
    val = evaluate_loss(model, val_ids, batch, seq, max_batches=batches, starts=starts)
    click.echo(f"{model_path}: {model.num_parameters():,} parameters")
    how = f"{batches} batches of {batch} x {seq}"
    note = f"; its sidecar records {recorded:.4f}" if recorded is not None else ""
    click.echo(f"  val loss {val:.4f} (perplexity {math.exp(val):.2f}; {how}{note})")
    for line, score in score_lines(model, tok, corpus):
        click.echo(line)
        for question, want, got in score.failures[:show]:
            click.echo(f"      ✗ {question!r}: expected {want!r}, got {got!r}")
    click.echo(f"  ({time.perf_counter() - tick:.1f}s)")
