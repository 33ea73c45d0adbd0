"""`minillm train`: train a GPT on the course's own chat corpus, with a live display.

    minillm train                          # the default preset (minutes on 2 cores)
    minillm train --preset tiny --steps 50 --out tiny.bin
    minillm train --resume minillm-default.bin --steps 4000   # continue a stopped run
    minillm train --plot minillm-default.jsonl                # the curve of a finished run
    minillm train --tokenizer bpe --out bpe.bin   # + bpe.meta.json, bpe.vocab.json

Every run writes the model (the lab06 file format; with `--tokenizer bpe`, a checkpoint
that `minillm generate/chat/serve` load with its vocabulary: see
`grader.commands.training_data`), its resume state (`<out>.state.npz`), its loss curve as
JSON lines (`<out>` with `.jsonl`) and, where matplotlib is installed (`pip install -e
'.[plot]'`), a PNG of that curve. Ctrl-C stops after the current step and saves a
checkpoint; a second Ctrl-C quits at once. On a terminal the display is a rich progress
bar; elsewhere, one line every few steps. Both show a sparkline of the loss, and the run
ends with a summary.
"""

from __future__ import annotations

import json
import math
import signal
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

import click

__all__ = ["plot_log", "read_log", "sparkline", "train"]

_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 40) -> str:
    """The values as block characters, averaged into at most `width` bins.

    Example:
        >>> sparkline([4.0, 3.0, 2.0, 1.0], width=4)
        '█▆▃▁'
    """
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return ""
    bins = min(width, len(vals))
    chunks = [vals[i * len(vals) // bins : (i + 1) * len(vals) // bins] for i in range(bins)]
    means = [sum(c) / len(c) for c in chunks if c]
    lo, span = min(means), (max(means) - min(means)) or 1.0
    return "".join(_BARS[round((m - lo) / span * (len(_BARS) - 1))] for m in means)


def read_log(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines training log.

    Raises:
        click.UsageError: if a line is not a JSON object with a "step" and a "loss".
    """
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise click.UsageError(f"{path}:{n} is not JSON: {e}") from None
        if not isinstance(row, dict) or "step" not in row or "loss" not in row:
            raise click.UsageError(f"{path}:{n} is not a line of a training log: {line[:60]}")
        rows.append(row)
    return rows


def plot_log(path: Path) -> Path | None:
    """Draw the train and validation loss and the learning rate of a log into a PNG.

    Returns:
        The PNG's path (the log's, with `.png`), or None if matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = read_log(path)
    val = [r for r in rows if r.get("val_loss") is not None]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot([r["step"] for r in rows], [r["loss"] for r in rows], lw=1, label="train loss")
    ax.plot([r["step"] for r in val], [r["val_loss"] for r in val], "o-", label="val loss")
    ax.set(xlabel="step", ylabel="cross-entropy (nats)", yscale="log", title=path.name)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    lr_ax = ax.twinx()
    lr_ax.plot([r["step"] for r in rows], [r.get("lr", 0.0) for r in rows], "g:", lw=1)
    lr_ax.set_ylabel("learning rate", color="g")
    fig.tight_layout()
    out = path.with_suffix(".png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


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
            "\nCtrl-C: stopping after this step and saving a checkpoint (again: quit now)",
            err=True,
        )

    def __call__(self) -> bool:
        return self.requested


def _log_summary(path: Path) -> None:
    rows = read_log(path)
    if not rows:
        raise click.UsageError(f"{path} has no rows")
    vals = [r["val_loss"] for r in rows if r.get("val_loss") is not None]
    click.echo(f"{path}: {len(rows)} rows, steps {rows[0]['step']}..{rows[-1]['step']}")
    click.echo(f"  train loss {sparkline([r['loss'] for r in rows])} {rows[-1]['loss']:.4f}")
    if vals:
        click.echo(f"  val loss   {sparkline(vals)} {vals[-1]:.4f}")
    png = plot_log(path)
    if png is None:
        click.echo("  (no PNG: matplotlib is not installed; pip install -e '.[plot]')")
    else:
        click.echo(f"  plot       {png}")


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
    help="Model file to write  [default: minillm-<preset>.bin]",
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
        _log_summary(plot)
        return
    from framework.blas import set_blas_threads
    from framework.train import PRESETS
    from grader.commands.training_data import TokenizerChoice
    from grader.commands.training_run import TrainingRun

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
    path = out or Path(f"minillm-{preset}.bin")
    try:
        choice = TokenizerChoice(tokenizer, vocab, vocab_size)
        run = TrainingRun(preset, config, path, resume, choice)
    except (OSError, ValueError) as e:
        raise click.UsageError(str(e)) from None
    with StopFlag() as stop:
        status = run.execute(stop, sys.stdout.isatty())
    sys.exit(status)
