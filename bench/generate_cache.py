"""What the KV cache buys: tokens/s of generation with and without it.

Default model config (max_seq_len 128), a 64-token prompt, 128 new tokens with the default
sampling settings (T = 1, top-k 40, top-p 0.9, fixed seed, EOS ignored so every run makes
all 128). With the cache, the prompt is prefilled once and each step feeds one token; without
it, each step runs the whole window again. Both runs make the same tokens (the window
slides once, at the same step, in both). One run each by default, as the task asks; the
ratio is the speed-up (wall clock, and CPU time of this process, which a busy machine
disturbs less). BLAS runs on one thread (`--threads N` to change): on a shared 2-core
machine a multi-threaded BLAS spins and slows the uncached run far more than the cached one,
which would flatter the ratio. Goal: >= 5x.

    .venv/bin/python bench/generate_cache.py [--runs N] [--threads N]
"""

from __future__ import annotations

from model_harness import threads_from_argv

THREADS = threads_from_argv()

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from figures import record  # noqa: E402

from framework.config import default_config  # noqa: E402
from framework.generate import GenerateConfig, GenerateResult, generate  # noqa: E402
from framework.model import GPTModel, init_weights  # noqa: E402
from framework.tokenizer import ByteTokenizer  # noqa: E402

PROMPT, NEW, GOAL = 64, 128, 5.0


def timed(model: GPTModel, prompt: list[int], cache: bool) -> tuple[float, float, GenerateResult]:
    """(wall s, CPU s, result) of one generation."""
    cfg = GenerateConfig(max_new_tokens=NEW, seed=0, stop_at_eos=False, use_cache=cache)
    wall, cpu = time.perf_counter(), time.process_time()
    out = generate(model, ByteTokenizer(), prompt, cfg)
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 1
    model = GPTModel(default_config())
    init_weights(model, 0)
    prompt = np.random.default_rng(0).integers(4, 260, size=PROMPT).tolist()
    timed(model, prompt[:8], True)  # warm-up: imports, first allocations
    wall: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    tokens: dict[bool, list[int]] = {}
    for _ in range(runs):
        for cache in (True, False):
            w, c, out = timed(model, prompt, cache)
            wall[cache].append(w)
            cpu[cache].append(c)
            tokens[cache] = out.token_ids
    print(f"default config, {PROMPT}-token prompt, {NEW} new tokens, {runs} run(s) each, "
          f"{THREADS} BLAS thread(s)")  # fmt: skip
    for cache, label in ((True, "with KV cache"), (False, "without cache")):
        w, c = statistics.median(wall[cache]), statistics.median(cpu[cache])
        print(f"  {label:14s} {NEW / w:8.1f} tokens/s wall, {NEW / c:8.1f} tokens/s CPU")
    ratio_wall = statistics.median(wall[False]) / statistics.median(wall[True])
    ratio_cpu = statistics.median(cpu[False]) / statistics.median(cpu[True])
    verdict = "meets" if min(ratio_wall, ratio_cpu) >= GOAL else "below"
    record("KV-cache speed-up (wall)", ratio_wall, "x", f">= {GOAL:g}", ratio_wall >= GOAL)
    record("KV-cache speed-up (CPU)", ratio_cpu, "x", f">= {GOAL:g}", ratio_cpu >= GOAL)
    print(f"  speed-up {ratio_wall:.1f}x wall, {ratio_cpu:.1f}x CPU ({verdict} the goal of "
          f"{GOAL:.0f}x); same tokens: {tokens[True] == tokens[False]}")  # fmt: skip


if __name__ == "__main__":
    main()
