"""Training throughput (forward + backward + clip + AdamW) and peak memory of `minillm train`.

1. tokens/s of one full training step of the default GPT at two batch shapes, 8 × 64 and
   the default preset's (`framework.train.PRESETS["default"]`: 24 × 96): the framework,
   exactly as `framework.train.train` runs it (forward_batch, cross_entropy_grad_inplace,
   backward, clip_grad_norm, AdamW.step), against the same model in PyTorch CPU eager (same
   weights, same thread count, torch.optim.AdamW with the same decay groups), interleaved,
   medians of `--runs` (default 20); the ratio torch time / framework time is the
   framework's speed in units of torch's (goal: >= 1.25).
2. Peak resident memory of `minillm train --preset default` in a child process, read
   with resource.getrusage(RUSAGE_CHILDREN) (goal: <= 500 MB). `--steps N` (default 40)
   keeps it short: the peak is reached in the first steps (corpus, model, optimizer state,
   one batch of activations) and does not grow with the step count.

    .venv/bin/python bench/train_throughput.py [--threads N] [--runs N] [--steps N]
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from model_harness import describe, import_torch, interleaved, runs_from_argv, threads_from_argv

THREADS = threads_from_argv()

import numpy as np  # noqa: E402
from figures import record  # noqa: E402

from framework import GPTModel, default_config, init_weights  # noqa: E402
from framework.backward import cross_entropy_grad_inplace  # noqa: E402
from framework.optimizer import AdamW, clip_grad_norm, decays  # noqa: E402
from framework.train import PRESETS  # noqa: E402

GOAL = 1.25  # the framework's training step against torch eager's, tokens/s
ROOT = Path(__file__).resolve().parent.parent


def throughput(runs: int, b: int, t: int) -> float:
    """Print and return torch's step time / the framework's (wall medians) at batch [b, t]."""
    torch = import_torch()
    import torch.nn.functional as F
    from torch_gpt import torch_gpt, torch_params

    model = GPTModel(default_config())
    init_weights(model, 0)
    opt = AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.01)
    params = torch_params(model.state_dict(), grad=True)
    shapes = {n: tuple(p.shape) for n, p in params.items()}
    groups = [
        {"params": [p for n, p in params.items() if decays(n, shapes[n])], "weight_decay": 0.01},
        {"params": [p for n, p in params.items() if not decays(n, shapes[n])], "weight_decay": 0},
    ]
    topt = torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.99))
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 260, size=(b, t + 1))
    inputs, targets = ids[:, :-1], ids[:, 1:]
    t_targets = torch.from_numpy(targets.reshape(-1))

    def framework_step() -> None:  # the step of framework.train.train
        logits = model.forward_batch(inputs)
        cross_entropy_grad_inplace(logits, targets)
        grads = model.backward(logits)
        clip_grad_norm(grads, 1.0)
        opt.step(grads)

    def torch_step() -> None:
        topt.zero_grad(set_to_none=True)
        logits = torch_gpt(inputs, params, model.config)
        F.cross_entropy(logits.reshape(b * t, -1), t_targets).backward()
        torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0)
        topt.step()

    got = interleaved({"framework": framework_step, "torch": torch_step}, runs)
    print(describe(THREADS, runs))
    print(f"torch {torch.__version__}, numpy {np.__version__}")
    print(f"train step (forward + backward + clip + AdamW), batch {b} x {t}:")
    torch_wall, torch_cpu = got["torch"]
    for name, (wall, cpu) in got.items():
        print(
            f"  {name:10s} wall {wall:7.2f} ms = {b * t / wall * 1e3:8.0f} tokens/s  "
            f"cpu {cpu:7.2f} ms = {b * t / cpu * 1e3:8.0f} tokens/s  "
            f"ratio vs torch: wall {torch_wall / wall:.2f}  cpu {torch_cpu / cpu:.2f}"
        )
    wall_ratio, cpu_ratio = torch_wall / got["framework"][0], torch_cpu / got["framework"][1]
    for kind, ratio in (("wall", wall_ratio), ("CPU", cpu_ratio)):
        record(f"train step {b}x{t}, tokens/s vs torch ({kind})", ratio, "x", f">= {GOAL}",
               ratio >= GOAL)  # fmt: skip
    return wall_ratio


def peak_memory(steps: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            str(ROOT / ".venv" / "bin" / "minillm"),
            "train",
            "--preset",
            "default",
            "--steps",
            str(steps),
            "--out",
            str(Path(tmp) / "m.bin"),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, check=False)
    if done.returncode != 0:
        print(f"minillm train failed ({done.returncode}):\n{done.stderr[-2000:]}")
        return
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    verdict = "ok" if peak_mb <= 500 else "OVER the 500 MB goal"
    record("peak RSS of minillm train --preset default", peak_mb, "MB", "<= 500", peak_mb <= 500)
    print(
        f"peak RSS of `minillm train --preset default --steps {steps}`: {peak_mb:.0f} MB "
        f"({verdict})"
    )


def main() -> None:
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 40
    preset = PRESETS["default"]
    for b, t in ((8, 64), (preset.batch_size, preset.seq_len)):
        throughput(runs_from_argv(20), b, t)
    peak_memory(steps)


if __name__ == "__main__":
    main()
