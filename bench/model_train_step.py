"""Training forward + backward of the default GPT, batch 8 × 64: framework vs PyTorch.

One step = logits for [8, 64] ids, the gradient of the mean cross-entropy with respect to
the logits, and the backward pass to every parameter's gradient (no optimizer: AdamW is
timed in bench/train_*.py). PyTorch CPU eager, same weights, same thread count, one run,
interleaved. Printed as tokens/s and the ratio framework / torch (goal: >= 1).

    .venv/bin/python bench/model_train_step.py [--threads N] [--runs N]
"""

from __future__ import annotations

from model_harness import (
    describe,
    import_torch,
    interleaved,
    runs_from_argv,
    threads_from_argv,
)

THREADS = threads_from_argv()

import numpy as np  # noqa: E402
from figures import record  # noqa: E402
from numpy.typing import NDArray  # noqa: E402

from framework import GPTModel, default_config, init_weights  # noqa: E402

B, T = 8, 64


def mean_ce_grad(logits: NDArray[np.float32], targets: NDArray[np.int64]) -> NDArray[np.float32]:
    """d(mean cross-entropy over B·T positions) / d(logits) = (softmax − one_hot) / (B·T)."""
    g = logits - logits.max(axis=-1, keepdims=True)  # (B, T, V)
    np.exp(g, out=g)
    g /= g.sum(axis=-1, keepdims=True)
    flat = g.reshape(-1, g.shape[-1])  # (B·T, V)
    flat[np.arange(flat.shape[0]), targets.reshape(-1)] -= 1.0
    g /= flat.shape[0]
    return g


def main() -> None:
    runs = runs_from_argv(30)
    torch = import_torch()
    import torch.nn.functional as F
    from torch_gpt import torch_gpt, torch_params

    model = GPTModel(default_config())
    init_weights(model, 0)
    params = torch_params(model.state_dict(), grad=True)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 260, size=(B, T + 1))
    inputs, targets = ids[:, :-1], ids[:, 1:]
    t_targets = torch.from_numpy(targets.reshape(-1))

    def framework_step() -> dict[str, NDArray[np.float32]]:
        logits = model.forward_batch(inputs)
        return model.backward(mean_ce_grad(logits, targets))

    def torch_step() -> None:
        for p in params.values():
            p.grad = None
        logits = torch_gpt(inputs, params, model.config)
        F.cross_entropy(logits.reshape(B * T, -1), t_targets).backward()

    got = interleaved({"framework": framework_step, "torch": torch_step}, runs)
    ours, _ = framework_step(), torch_step()
    worst = max(
        float(np.abs(ours[n] - p.grad.numpy()).max() / (np.abs(p.grad.numpy()).max() + 1e-30))
        for n, p in params.items()
    )
    print(describe(THREADS, runs))
    print(f"torch {torch.__version__}, numpy {np.__version__}")
    print(f"forward + backward, batch {B} x {T} (worst relative gradient difference {worst:.1e}):")
    torch_wall, torch_cpu = got["torch"]
    for name, (wall, cpu) in got.items():
        print(
            f"  {name:10s} wall {wall:7.2f} ms = {B * T / wall * 1e3:8.0f} tokens/s  "
            f"cpu {cpu:7.2f} ms = {B * T / cpu * 1e3:8.0f} tokens/s  "
            f"speed vs torch: wall {torch_wall / wall:.2f}  cpu {torch_cpu / cpu:.2f}"
        )
    speed = got["torch"][0] / got["framework"][0]
    record(f"forward + backward {B}x{T}, tokens/s vs torch (wall)", speed, "x", ">= 1",
           speed >= 1)  # fmt: skip


if __name__ == "__main__":
    main()
