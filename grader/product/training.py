"""One `minillm train` run: corpus, model, optimizer and loader, the live display, the files.

`TrainingRun` wires `framework.train.train` to the terminal: it builds (or resumes) the
model and its optimizer, writes the checkpoint, its resume state and the JSON-lines log,
shows progress, and ends with a summary that includes the held-out exact-match score.
Kept apart from the click command so that tests can drive a run without a terminal.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import click
import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from framework.bpe_tokenizer import BPETokenizer
from framework.dataloader import WindowLoader
from framework.model import model_save
from framework.optimizer import AdamW
from framework.shipped import meta_path, save_checkpoint
from framework.train import JsonlLog, TrainConfig, TrainResult, load_state, save_state, state_path
from framework.train import Progress as Step
from framework.train import train as train_loop
from grader.product.data import MODEL_CONFIGS, TokenizerChoice, encode_corpus, open_model
from grader.product.display import plot_log, sparkline
from grader.product.scoring import course_corpus, score_lines

__all__ = ["TrainingRun"]


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _duration(seconds: float) -> str:
    """'42.0 s' or '7 min 05 s'."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    mins, secs = divmod(round(seconds), 60)
    return f"{mins} min {secs:02d} s"


class Display:
    """Progress on a terminal (rich bar) or as plain lines; keeps the losses for sparklines."""

    def __init__(self, start: int, total: int, tty: bool) -> None:
        self.losses: list[float] = []  # log(loss): the sparkline shows the slow part too
        self.total, self.every = total, max(1, (total - start) // 20)
        self.rate = 0.0
        self.bar: Progress | None = None
        if tty:
            self.bar = Progress(
                TextColumn("[bold]train"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("loss {task.fields[loss]}  lr {task.fields[lr]}  {task.fields[tps]}"),
                TextColumn("[cyan]{task.fields[spark]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(),
            )
            self.task = self.bar.add_task(
                "train", total=total, completed=start, loss="-", lr="-", tps="", spark=""
            )
            self.bar.start()

    def __call__(self, p: Step) -> None:
        self.losses.append(math.log(max(p.loss, 1e-9)))
        self.rate = p.tokens_per_s if not self.rate else 0.9 * self.rate + 0.1 * p.tokens_per_s
        val = f"  val {p.val_loss:.4f}" if p.val_loss is not None else ""
        if self.bar is not None:
            self.bar.update(
                self.task,
                completed=p.step,
                loss=f"{p.loss:.4f}{val}",
                lr=f"{p.lr:.2e}",
                tps=f"{self.rate:,.0f} tok/s",
                spark=sparkline(self.losses[-200:], 20),
            )
        elif p.step % self.every == 0 or p.val_loss is not None or p.step == p.steps:
            click.echo(
                f"step {p.step:>6}/{p.steps}  loss {p.loss:.4f}{val}  lr {p.lr:.2e}  "
                f"{self.rate:,.0f} tok/s  {sparkline(self.losses, 30)}"
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


class TrainingRun:
    """Everything one run needs, built from a preset or from a checkpoint to resume.

    Raises:
        OSError, ValueError: if the checkpoint or its state file cannot be read, or the
            window length does not fit the model.
    """

    def __init__(
        self,
        preset: str,
        config: TrainConfig,
        out: Path,
        resume: Path | None,
        tokenizer: TokenizerChoice | None = None,
    ):
        self.preset, self.config, self.out = preset, config, out
        self.corpus = course_corpus()
        self.tok, self.model, self.vocab_line = open_model(
            MODEL_CONFIGS[preset](), tokenizer or TokenizerChoice(), resume, self.corpus,
            config.seed,
        )  # fmt: skip
        if not isinstance(self.tok, BPETokenizer) and meta_path(out).is_file():
            raise ValueError(
                f"{out} has the sidecar of a BPE model ({meta_path(out).name}), which a byte "
                "model written there would not match: choose another --out, or delete both"
            )
        self.train_ids, self.val_ids = encode_corpus(self.corpus, self.tok)
        if config.seq_len > self.model.config.max_seq_len:
            self.config = replace(config, seq_len=self.model.config.max_seq_len)
        dialogue_starts = np.flatnonzero(self.train_ids == self.tok.bos_id)  # (n_dialogues,)
        self.loader = WindowLoader(
            self.train_ids, config.batch_size, self.config.seq_len, config.seed, dialogue_starts
        )
        self.opt = AdamW(
            self.model.parameters(),
            lr=config.lr,
            betas=(config.beta1, config.beta2),
            eps=config.eps,
            weight_decay=config.weight_decay,
        )
        self.start = load_state(resume, self.opt, self.loader) if resume else 0
        self.resumed = resume is not None
        self.log_path = out.with_suffix(".jsonl")

    @property
    def files(self) -> list[Path]:
        """The model's files: the weights, and for BPE the sidecar and the vocabulary."""
        if not isinstance(self.tok, BPETokenizer):
            return [self.out]
        return [self.out, meta_path(self.out), self.out.with_suffix(".vocab.json")]

    def checkpoint(self, step: int) -> None:
        """Write the model (for BPE, a checkpoint with its vocabulary) and its resume state."""
        if isinstance(self.tok, BPETokenizer):
            info = {"tokenizer": "bpe", "preset": self.preset, "step": step,
                    "train": asdict(self.config)}  # fmt: skip
            save_checkpoint(self.model, self.tok, self.out, self.files[2], info)
        else:
            model_save(self.model, self.out)
        save_state(self.out, self.opt, self.loader, step)

    def execute(self, should_stop: Callable[[], bool], tty: bool) -> int:
        """Train, then print the summary. Returns the exit status (0, or 130 if stopped)."""
        c = self.config
        n = self.model.num_parameters()
        if self.vocab_line:
            click.echo(self.vocab_line)
        click.echo(
            f"miniLLM train: preset {self.preset}, {n:,} parameters, "
            f"{len(self.train_ids):,} training tokens, batch {c.batch_size}x{c.seq_len}, "
            f"steps {self.start + 1}..{c.steps}, lr {c.lr:g}"
        )
        if self.start >= c.steps:
            raise click.UsageError(f"the checkpoint is at step {self.start}; ask for more --steps")
        log = JsonlLog(self.log_path, every=10, append=self.resumed)
        display = Display(self.start, c.steps, tty)
        try:
            cpu = time.process_time()
            result = train_loop(
                self.model,
                self.loader,
                self.val_ids,
                c,
                self.opt,
                start_step=self.start,
                callbacks=[log, display],
                checkpoint=self.checkpoint,
                should_stop=should_stop,
                val_starts=np.flatnonzero(self.val_ids == self.tok.bos_id),
            )
            if result.interrupted and result.history and result.history[-1].step % log.every:
                log.write(result.history[-1])
        finally:
            display.close()
            log.close()
        self.summary(result, display.losses, time.process_time() - cpu)
        return 130 if result.interrupted else 0

    def summary(self, r: TrainResult, log_losses: list[float], cpu: float) -> None:
        """Val loss, perplexity, time, held-out score and the files written."""
        c = self.config
        tokens = (r.step - self.start) * c.batch_size * c.seq_len
        head = "Stopped (Ctrl-C)" if r.interrupted else "Finished"
        click.echo(
            f"\n{head} at step {r.step}/{c.steps} after {_duration(r.seconds)} "
            f"({tokens / max(r.seconds, 1e-9):,.0f} tokens/s; CPU time {_duration(cpu)}, "
            f"load average {_load():.1f})"
        )
        click.echo(f"  train loss  {sparkline(log_losses)}  {r.loss:.4f}  (log scale)")
        if r.val_loss is not None:
            click.echo(f"  val loss    {r.val_loss:.4f}  (perplexity {math.exp(r.val_loss):.2f})")
        if r.interrupted:  # answering the held-out questions takes 5-15 s: not now
            click.echo(
                f"  held-out questions not answered (stopped); later: minillm eval {self.out}"
            )
        else:
            tick = time.perf_counter()
            for line, _ in score_lines(self.model, self.tok, self.corpus):
                click.echo(line)
            click.echo(f"  (answered in {time.perf_counter() - tick:.1f} s)")
        png = plot_log(self.log_path)
        files = [*self.files, state_path(self.out), self.log_path] + ([png] if png else [])
        click.echo("  wrote " + ", ".join(str(f) for f in files))
        if r.interrupted:
            click.echo(f"  resume: minillm train --preset {self.preset} --resume {self.out}")
        elif isinstance(self.tok, BPETokenizer):
            click.echo(f"  next: minillm chat {self.out}")
        else:
            click.echo(f"  next: minillm eval {self.out}")
