"""What the KV cache buys: tokens/s of generation with and without it.

Default model config (max_seq_len 128), a 64-token prompt, 128 new tokens with the default
sampling settings (T = 1, top-k 40, top-p 0.9, fixed seed, EOS ignored so every run makes
all 128). With the cache, the prompt is prefilled once and each step feeds one token; without
it, each step runs the whole window again. Both runs make the same tokens (the window
slides once, at the same step, in both). One run each, as the task asks; the ratio is the
speed-up. Goal: >= 5x.

    .venv/bin/python bench/generate_cache.py [--runs N]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from framework.config import default_config
from framework.generate import GenerateConfig, GenerateResult, generate
from framework.model import GPTModel, init_weights
from framework.tokenizer import ByteTokenizer

PROMPT, NEW, GOAL = 64, 128, 5.0


def timed(model: GPTModel, prompt: list[int], use_cache: bool) -> tuple[float, GenerateResult]:
    cfg = GenerateConfig(max_new_tokens=NEW, seed=0, stop_at_eos=False, use_cache=use_cache)
    start = time.perf_counter()
    out = generate(model, ByteTokenizer(), prompt, cfg)
    return time.perf_counter() - start, out


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 1
    model = GPTModel(default_config())
    init_weights(model, 0)
    prompt = np.random.default_rng(0).integers(4, 260, size=PROMPT).tolist()
    timed(model, prompt[:8], True)  # warm-up: imports, first allocations
    seconds: dict[bool, list[float]] = {True: [], False: []}
    tokens: dict[bool, list[int]] = {}
    for _ in range(runs):
        for use_cache in (True, False):
            s, out = timed(model, prompt, use_cache)
            seconds[use_cache].append(s)
            tokens[use_cache] = out.token_ids
    same = tokens[True] == tokens[False]
    print(f"default config, {PROMPT}-token prompt, {NEW} new tokens, {runs} run(s) each")
    rates = {}
    for use_cache, label in ((True, "with KV cache"), (False, "without cache")):
        rates[use_cache] = NEW / statistics.median(seconds[use_cache])
        print(f"  {label:14s} {rates[use_cache]:8.1f} tokens/s")
    ratio = rates[True] / rates[False]
    verdict = "meets" if ratio >= GOAL else "below"
    print(f"  speed-up {ratio:.1f}x ({verdict} the goal of {GOAL:.0f}x); same tokens: {same}")


if __name__ == "__main__":
    main()
