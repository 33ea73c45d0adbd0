"""framework.train: the loop on a small stand-in model (a bigram table), resume, NaN, log.

The stand-in has the training interface of `GPTModel` (parameters, forward_batch,
backward) and a backward that is trivially right, so these tests check the loop itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from framework.dataloader import WindowLoader
from framework.optimizer import AdamW
from framework.tensor import Tensor, tensor_from
from framework.train import (
    JsonlLog,
    Progress,
    TrainConfig,
    evaluate_loss,
    load_state,
    save_state,
    state_path,
    train,
)


class Bigram:
    """logits[b, t] = table[ids[b, t]] + bias."""

    def __init__(self, vocab: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.table = tensor_from(rng.standard_normal((vocab, vocab)) * 0.1)
        self.bias = tensor_from(np.zeros(vocab))
        self._ids: np.ndarray | None = None

    def parameters(self) -> list[tuple[str, Tensor]]:
        return [("table", self.table), ("bias", self.bias)]

    def forward_batch(self, ids: np.ndarray) -> np.ndarray:
        self._ids = ids
        return self.table.numpy()[ids] + self.bias.numpy()  # (B, T, V)

    def backward(self, dlogits: np.ndarray) -> dict[str, np.ndarray]:
        assert self._ids is not None
        d_table = np.zeros_like(self.table.numpy())
        np.add.at(d_table, self._ids, dlogits)
        return {"table": d_table, "bias": dlogits.sum(axis=(0, 1))}


def cyclic(n: int = 2000, period: int = 7) -> np.ndarray:
    return np.arange(n) % period  # next token is a function of this one: loss -> 0


def setup(seed: int = 0, **overrides: object) -> tuple[Bigram, WindowLoader, AdamW, TrainConfig]:
    cfg = TrainConfig(steps=60, batch_size=4, seq_len=8, lr=0.1, min_lr=0.01, warmup=5,
                      eval_every=20, eval_batches=2, seed=seed)  # fmt: skip
    for k, v in overrides.items():
        setattr(cfg, k, v)
    model = Bigram(7, seed)
    loader = WindowLoader(cyclic(), cfg.batch_size, cfg.seq_len, seed=cfg.seed)
    opt = AdamW(model.parameters(), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps,
                weight_decay=cfg.weight_decay)  # fmt: skip
    return model, loader, opt, cfg


def test_loss_goes_down_and_callbacks_see_every_step() -> None:
    model, loader, opt, cfg = setup()
    seen: list[Progress] = []
    before = evaluate_loss(model, cyclic(200), 4, 8, 2)
    result = train(model, loader, cyclic(200), cfg, opt, callbacks=[seen.append])
    assert [p.step for p in seen] == list(range(1, 61)) and result.step == 60
    assert not result.interrupted
    assert before > 1.9 and result.val_loss is not None and result.val_loss < 0.1
    assert [p.step for p in seen if p.val_loss is not None] == [20, 40, 60]
    assert seen[0].lr == pytest.approx(0.02) and seen[-1].lr == pytest.approx(0.01)
    assert all(p.tokens_per_s > 0 and p.grad_norm >= 0 for p in seen)


def test_resume_gives_the_same_weights_as_one_run(tmp_path: Path) -> None:
    model_a, loader_a, opt_a, cfg = setup()
    train(model_a, loader_a, cyclic(200), cfg, opt_a)
    model_b, loader_b, opt_b, _ = setup()
    cfg_half = TrainConfig(**{**cfg.__dict__})
    stops = iter([False] * 25 + [True])
    ckpt = tmp_path / "m.bin"
    saved: list[int] = []

    def checkpoint(step: int) -> None:
        saved.append(step)
        save_state(ckpt, opt_b, loader_b, step)

    first = train(model_b, loader_b, cyclic(200), cfg_half, opt_b, checkpoint=checkpoint,
                  should_stop=lambda: next(stops))  # fmt: skip
    assert first.interrupted and first.step == 25 and saved == [25]
    assert state_path(ckpt).is_file()
    weights = {n: p.numpy().copy() for n, p in model_b.parameters()}
    model_c, loader_c, opt_c, _ = setup(seed=1)  # other init and loader seed: all restored
    for n, p in model_c.parameters():
        p.numpy()[...] = weights[n]
    step = load_state(ckpt, opt_c, loader_c)
    result = train(model_c, loader_c, cyclic(200), cfg, opt_c, start_step=step)
    assert result.step == 60
    for (n, a), (_, c) in zip(model_a.parameters(), model_c.parameters(), strict=True):
        np.testing.assert_array_equal(a.numpy(), c.numpy(), err_msg=n)


def test_checkpoint_every(tmp_path: Path) -> None:
    model, loader, opt, cfg = setup(checkpoint_every=25)
    saved: list[int] = []
    train(model, loader, cyclic(200), cfg, opt, checkpoint=saved.append)
    assert saved == [25, 50, 60]


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_nan_stops_the_run() -> None:
    model, loader, opt, cfg = setup(lr=1e30, warmup=0)
    model.table.numpy()[0, 0] = np.inf
    with pytest.raises(FloatingPointError, match="step 1"):
        train(model, loader, cyclic(200), cfg, opt)


def test_jsonl_log(tmp_path: Path) -> None:
    model, loader, opt, cfg = setup()
    log = JsonlLog(tmp_path / "log.jsonl", every=10)
    train(model, loader, cyclic(200), cfg, opt, callbacks=[log])
    log.close()
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [10, 20, 30, 40, 50, 60]
    assert set(rows[0]) == {"step", "loss", "val_loss", "lr", "tokens_per_s", "elapsed"}
    assert rows[0]["val_loss"] is None and rows[1]["val_loss"] is not None
