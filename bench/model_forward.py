"""Forward time of the default GPT: the framework vs the same model in PyTorch CPU eager.

Same weights (the framework's, copied into torch tensors), same thread count, one run,
interleaved. Shapes: [1, 128] ids (`GPTModel.forward`, one sequence) and [8, 64] ids
(`forward_batch` without keeping activations; the training variant that keeps them is
shown too). Goal: framework time <= PyTorch time (ratio <= 1).

    .venv/bin/python bench/model_forward.py [--threads N] [--runs N]
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

from framework import GPTModel, default_config, init_weights  # noqa: E402


def main() -> None:
    runs = runs_from_argv(60)
    torch = import_torch()
    from torch_gpt import torch_gpt, torch_params

    model = GPTModel(default_config())
    init_weights(model, 0)
    params = torch_params(model.state_dict())
    rng = np.random.default_rng(0)
    print(describe(THREADS, runs))
    print(f"torch {torch.__version__}, numpy {np.__version__}")
    for b, t in ((1, 128), (8, 64)):
        ids = rng.integers(0, model.config.vocab_size, size=(b, t))
        if b == 1:
            fns = {"framework": lambda ids=ids: model.forward(ids[0])}
        else:
            fns = {
                "framework": lambda ids=ids: model.forward_batch(ids, keep_activations=False),
                "framework, keeping activations": lambda ids=ids: model.forward_batch(ids),
            }
        with torch.inference_mode():
            fns["torch"] = lambda ids=ids: torch_gpt(ids, params, model.config)
            got = interleaved(fns, runs)
            want = torch_gpt(ids, params, model.config).numpy()
        ours = model.forward_batch(ids, keep_activations=False)
        err = float(np.abs(ours - want).max())
        print(f"[{b}, {t}] ids (max |logit difference| {err:.1e}):")
        torch_wall, torch_cpu = got["torch"]
        for name, (wall, cpu) in got.items():
            print(
                f"  {name:32s} wall {wall:7.2f} ms  cpu {cpu:7.2f} ms  "
                f"ratio to torch: wall {wall / torch_wall:.2f}  cpu {cpu / torch_cpu:.2f}"
            )
            if name != "torch":
                ratio = wall / torch_wall
                record(f"forward [{b}, {t}] {name} / torch, wall time", ratio, "x", "<= 1",
                       ratio <= 1)  # fmt: skip


if __name__ == "__main__":
    main()
