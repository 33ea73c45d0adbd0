"""`minillm train`: train a GPT on the course's own chat corpus, with a live display.

    minillm train                          # the default preset (minutes on 2 cores)
    minillm train --preset tiny --steps 50 --out tiny.bin
    minillm train --resume minillm-default.bin --steps 4000   # continue a stopped run
    minillm train --plot minillm-default.jsonl                # the curve of a finished run
    minillm train --tokenizer bpe --out bpe.bin   # + bpe.meta.json, bpe.vocab.json

Every run writes the model (the lab06 file format; with `--tokenizer bpe`, a checkpoint
that `minillm generate/chat/serve` load with its vocabulary: see
`grader.product.data`), its resume state (`<out>.state.npz`), its loss curve as
JSON lines (`<out>` with `.jsonl`) and, where matplotlib is installed (`pip install -e
'.[plot]'`), a PNG of that curve. Ctrl-C stops after the current step and saves a
checkpoint; a second Ctrl-C quits at once. On a terminal the display is a rich progress
bar; elsewhere, one line every few steps. Both show a sparkline of the loss, and the run
ends with a summary.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

import click

__all__ = ["train"]


class StopFlag:
    """While active, the first Ctrl-C asks the loop to stop; the second quits at once."""

    def __init__(self) -> None:
        self.requested = False
        self._old: Any = None

    def __enter__(self) -> StopFlag:
        self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._old)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        click.echo(
            "\nCtrl-C: stopping after this step and saving a checkpoint, without answering "
            "the held-out questions (again: quit now)",
            err=True,
        )

    def __call__(self) -> bool:
        return self.requested


@click.command("train")
@click.option(
    "--preset",
    type=click.Choice(["tiny", "default", "medium"]),
    default="default",
    show_default=True,
    help="Model size and training schedule.",
)
@click.option("--steps", type=click.IntRange(min=1), help="Updates in the whole run.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Model file to write  [default: minillm-<preset>.bin; with --resume, the "
    "checkpoint itself]",
)
@click.option(
    "--resume",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Continue from this checkpoint (and its .state.npz file).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seeds the initial weights and the batch order.",
)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), help="Peak learning rate.")
@click.option("--batch-size", type=click.IntRange(min=1), help="Windows per step.")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="BLAS threads (one is fastest for these small matrices on a busy machine).",
)
@click.option(
    "--tokenizer",
    type=click.Choice(["byte", "bpe"]),
    help="byte, or a BPE vocabulary learned on the corpus (the model is then a checkpoint "
    "with a .meta.json sidecar and a .vocab.json file)  [default: byte; with --resume, "
    "the checkpoint's]",
)
@click.option(
    "--vocab-size",
    type=click.IntRange(min=264),  # 256 bytes, BOS, EOS and the tags: no merge yet
    help="Ids of the BPE vocabulary to learn  [default: 1064, the shipped model's]",
)
@click.option(
    "--vocab",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Train with this BPE vocabulary file instead of learning one.",
)
@click.option(
    "--plot",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Only summarise and draw the .jsonl log of a finished run.",
)
def train(
    preset: str,
    steps: int | None,
    out: Path | None,
    resume: Path | None,
    seed: int,
    lr: float | None,
    batch_size: int | None,
    threads: int,
    tokenizer: str | None,
    vocab_size: int | None,
    vocab: Path | None,
    plot: Path | None,
) -> None:
    """Train a GPT on the course's generated chat corpus (greetings, sums, GPT facts)."""
    if plot is not None:
        from grader.product.display import log_summary

        try:
            click.echo("\n".join(log_summary(plot)))
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        return
    from framework.blas import set_blas_threads
    from framework.train import PRESETS
    from grader.product.data import TokenizerChoice
    from grader.product.training import TrainingRun

    set_blas_threads(threads)
    config = PRESETS[preset]
    config = replace(
        config,
        steps=steps or config.steps,
        warmup=config.warmup if steps is None else min(config.warmup, steps // 10),
        lr=lr or config.lr,
        batch_size=batch_size or config.batch_size,
        seed=seed,
    )
    path = out or resume or Path(f"minillm-{preset}.bin")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # --out runs/first/m.bin
        choice = TokenizerChoice(tokenizer, vocab, vocab_size)
        run = TrainingRun(preset, config, path, resume, choice)
    except (OSError, ValueError) as e:
        raise click.UsageError(str(e)) from None
    with StopFlag() as stop:
        status = run.execute(stop, sys.stdout.isatty())
    sys.exit(status)
