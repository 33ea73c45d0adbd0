"""The training loop: batches → forward → loss → backward → clip → AdamW, with evaluation.

One step, for a model with `forward_batch` and `backward` (`GPTModel`)::

    x, y = loader.next_batch()                      # (B, T), (B, T)
    logits = model.forward_batch(x)                 # (B, T, V), keeps a cache
    loss = cross_entropy_grad_inplace(logits, y)    # logits become d(loss)/d(logits)
    grads = model.backward(logits)                  # one gradient per parameter name
    clip_grad_norm(grads, grad_clip)                # all parameters in one norm
    optimizer.step(grads, lr=warmup_cosine_lr(step, ...))

Every `eval_every` steps the mean loss on fixed held-out windows is measured. A
checkpoint is the model in the lab06 file format (`model_save`) plus a state file beside
it (`<file>.state.npz`: AdamW's t, m and v, the step, and the loader's generator), so a
run resumes where it stopped. Unlike the C course's loop, the gradient of a batch is the
gradient of the batch's mean loss (not a sum over samples), and a NaN stops the run
instead of silently poisoning the weights.

Deliberately not here: the terminal display (`grader/commands/train.py`), the corpus
(`framework.corpus`), the model and its backward pass (`framework.model`,
`framework.gpt`).

Example:
    >>> TrainConfig(steps=10).tokens_per_step
    2048
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from framework.backward import cross_entropy_grad_inplace
from framework.dataloader import WindowLoader, eval_windows
from framework.loss import cross_entropy_with_grad
from framework.optimizer import AdamW, clip_grad_norm
from framework.schedule import warmup_cosine_lr
from framework.tensor import Tensor

__all__ = [
    "PRESETS",
    "JsonlLog",
    "Progress",
    "TrainConfig",
    "TrainResult",
    "Trainable",
    "evaluate_loss",
    "load_state",
    "save_state",
    "state_path",
    "train",
]


class Trainable(Protocol):
    """What the loop needs from a model (`GPTModel` has it)."""

    def parameters(self) -> list[tuple[str, Tensor]]: ...

    def forward_batch(self, ids: np.ndarray) -> np.ndarray: ...

    def backward(self, dlogits: np.ndarray) -> dict[str, np.ndarray]: ...


@dataclass
class TrainConfig:
    """Hyperparameters of a run."""

    steps: int = 2000  # updates in the whole run (the cosine reaches min_lr here)
    batch_size: int = 16  # B, windows per batch
    seq_len: int = 128  # T, tokens per window
    lr: float = 3e-3  # peak learning rate, after warmup
    min_lr: float = 3e-4  # floor of the cosine
    warmup: int = 100  # linear warmup steps
    weight_decay: float = 0.01  # decoupled, for matrices only (see optimizer.decays)
    beta1: float = 0.9
    beta2: float = 0.99
    eps: float = 1e-8
    grad_clip: float = 1.0  # max global gradient norm; 0 = no clipping
    eval_every: int = 250  # steps between validation losses (and at the last step)
    eval_batches: int = 8  # validation batches per evaluation
    checkpoint_every: int = 0  # steps between checkpoints; 0 = only at the end
    seed: int = 0  # seeds the loader

    @property
    def tokens_per_step(self) -> int:
        """B · T."""
        return self.batch_size * self.seq_len


PRESETS: dict[str, TrainConfig] = {
    # a smoke run: tens of seconds
    "tiny": TrainConfig(
        steps=300,
        batch_size=8,
        seq_len=64,
        lr=3e-3,
        min_lr=3e-4,
        warmup=30,
        eval_every=100,
        eval_batches=4,
    ),
    # the course's chat model: minutes on two cores
    # 96 tokens hold 90% of the arithmetic dialogues whole (windows open at a dialogue)
    "default": TrainConfig(
        steps=8000, batch_size=24, seq_len=96, lr=5e-3, min_lr=5e-4, warmup=100, eval_every=500
    ),
    "medium": TrainConfig(
        steps=6000, batch_size=16, seq_len=256, lr=2e-3, min_lr=2e-4, warmup=200, eval_every=500
    ),
}
"""Training hyperparameters of `minillm train --preset`; the model sizes are
`framework.config`'s presets of the same names."""


@dataclass
class Progress:
    """What the loop reports after each step."""

    step: int
    steps: int
    loss: float
    lr: float
    grad_norm: float
    tokens_per_s: float  # over the last step
    elapsed: float  # seconds since this run (not the resumed one) started
    val_loss: float | None = None  # set on evaluation steps


@dataclass
class TrainResult:
    """How a run ended."""

    step: int  # steps done, counting those before a resume
    loss: float  # training loss of the last step
    val_loss: float | None  # last validation loss
    seconds: float
    interrupted: bool
    history: list[Progress]


def evaluate_loss(
    model: Trainable,
    tokens: np.ndarray,
    batch_size: int,
    seq_len: int,
    max_batches: int,
    starts: np.ndarray | None = None,
) -> float:
    """Mean cross-entropy over fixed windows of `tokens` (see `eval_windows`)."""
    total, count = 0.0, 0
    for x, y in eval_windows(tokens, batch_size, seq_len, max_batches, starts):
        loss, _ = cross_entropy_with_grad(model.forward_batch(x), y)
        total, count = total + loss * x.size, count + x.size
    return total / count


def _loss_and_gradients(
    model: Trainable, x: np.ndarray, y: np.ndarray
) -> tuple[float, dict[str, np.ndarray]]:
    """Forward, loss, backward of one batch; the logits are gone when it returns (so the
    next step's forward can reuse their buffers)."""
    logits = model.forward_batch(x)  # (B, T, V)
    loss = cross_entropy_grad_inplace(logits, y)  # logits now hold d(loss)/d(logits)
    return loss, model.backward(logits)


def state_path(path: str | os.PathLike[str]) -> Path:
    """Where the resume state of checkpoint `path` lives: ``<path>.state.npz``."""
    p = Path(path)
    return p.with_name(p.name + ".state.npz")


def save_state(path: str | os.PathLike[str], opt: AdamW, loader: WindowLoader, step: int) -> None:
    """Write the optimizer and loader state of checkpoint `path` (see `state_path`)."""
    arrays = dict(opt.state_dict())
    arrays["meta"] = np.array(json.dumps({"step": step, "loader": loader.state()}))
    np.savez(state_path(path), **arrays)  # type: ignore[arg-type]


def load_state(path: str | os.PathLike[str], opt: AdamW, loader: WindowLoader) -> int:
    """Restore what `save_state` wrote; returns the step it was taken at.

    Raises:
        OSError: if the state file is missing.
        ValueError: if it does not fit this optimizer.
    """
    with np.load(state_path(path), allow_pickle=False) as f:
        meta = json.loads(str(f["meta"]))
        opt.load_state_dict({k: f[k] for k in f.files if k != "meta"})
    loader.set_state(meta["loader"])
    return int(meta["step"])


class JsonlLog:
    """A `train` callback that appends one JSON line per logged step to a file.

    Lines: ``{"step", "loss", "val_loss", "lr", "tokens_per_s", "elapsed"}``, every
    `every` steps and on every evaluation step.
    """

    def __init__(self, path: str | os.PathLike[str], every: int = 10, append: bool = False) -> None:
        self.path, self.every = Path(path), every
        self._file = open(self.path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115

    def __call__(self, p: Progress) -> None:
        if p.step % self.every == 0 or p.val_loss is not None or p.step == p.steps:
            self.write(p)

    def write(self, p: Progress) -> None:
        """Append the line of `p` whatever its step (e.g. the last one of a stopped run)."""
        row = {
            "step": p.step,
            "loss": round(p.loss, 5),
            "val_loss": None if p.val_loss is None else round(p.val_loss, 5),
            "lr": p.lr,
            "tokens_per_s": round(p.tokens_per_s, 1),
            "elapsed": round(p.elapsed, 3),
        }
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def train(
    model: Trainable,
    loader: WindowLoader,
    val_tokens: np.ndarray,
    config: TrainConfig,
    optimizer: AdamW,
    *,
    start_step: int = 0,
    callbacks: Iterable[Callable[[Progress], None]] = (),
    checkpoint: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    val_starts: np.ndarray | None = None,
) -> TrainResult:
    """Run steps start_step + 1 ... config.steps; see the module docstring for one step.

    Args:
        model: the model, trained in place.
        loader: training batches (its batch size and window length are used as they are).
        val_tokens: the held-out stream for `evaluate_loss`.
        config: hyperparameters (steps, schedule, clipping, evaluation, checkpoints).
        optimizer: an `AdamW` over `model.parameters()` (fresh, or restored to resume).
        start_step: steps already done (when resuming).
        callbacks: each gets a `Progress` after every step.
        checkpoint: called with the step number every `checkpoint_every` steps, at the
            end, and when `should_stop` ends the run early.
        should_stop: polled between steps (e.g. set by Ctrl-C); True ends the run after
            a checkpoint.
        val_starts: where validation windows start (e.g. each dialogue's start, like
            the training windows); None tiles the stream.

    Returns:
        A `TrainResult`.

    Raises:
        FloatingPointError: when the loss or the gradient norm stops being finite.
    """
    history: list[Progress] = []
    started, step, val_loss, loss = time.perf_counter(), start_step, None, math.nan

    def evaluate() -> float:
        return evaluate_loss(
            model, val_tokens, loader.batch_size, loader.seq_len, config.eval_batches, val_starts
        )

    while step < config.steps and not should_stop():
        tick = time.perf_counter()
        step += 1
        x, y = loader.next_batch()  # (B, T), (B, T)
        loss, grads = _loss_and_gradients(model, x, y)
        norm = clip_grad_norm(grads, config.grad_clip)
        if not (math.isfinite(loss) and math.isfinite(norm)):
            raise FloatingPointError(
                f"step {step}: loss {loss}, gradient norm {norm}; lower the learning rate "
                f"(now {config.lr}) or the gradient clip ({config.grad_clip})"
            )
        lr = warmup_cosine_lr(step, config.lr, config.min_lr, config.warmup, config.steps)
        optimizer.step(grads, lr=lr)
        now = time.perf_counter()
        at_eval = step % config.eval_every == 0 or step == config.steps
        val_loss_now = evaluate() if at_eval and config.eval_every > 0 else None
        val_loss = val_loss if val_loss_now is None else val_loss_now
        p = Progress(
            step,
            config.steps,
            loss,
            lr,
            norm,
            x.size / max(now - tick, 1e-9),
            now - started,
            val_loss_now,
        )
        history.append(p)
        for cb in callbacks:
            cb(p)
        if checkpoint and config.checkpoint_every and step % config.checkpoint_every == 0:
            checkpoint(step)
    interrupted = step < config.steps
    if checkpoint and step > start_step:
        checkpoint(step)
    return TrainResult(step, loss, val_loss, time.perf_counter() - started, interrupted, history)
