"""BPE benchmark (on demand): training time for 500 merges and encode/decode throughput.

Corpus: the course's own chat corpus (`framework.corpus`) when it exists, else the
project's own handouts and framework sources; about 300 KB either way (the C course trains
its 500 merges on 19 KB). Reference: HF `tokenizers` (Rust), trained on the same chunks
(the text cut at the chat tags, no word splitting, bytes as the base alphabet, 500 merges),
reported as ratios. Skipped with a message when `tokenizers` is not installed
(`.venv/bin/pip install tokenizers`).

    .venv/bin/python bench/bpe_train.py [--kb 300] [--merges 500] [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from framework.bpe_tokenizer import BPETokenizer  # noqa: E402
from framework.chat import CHAT_TAGS  # noqa: E402


def corpus_text(kb: int) -> tuple[str, str]:
    """About `kb` KB of text the project makes itself, and where it came from."""
    want = kb * 1024
    try:
        from framework.corpus import build_corpus  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        build_corpus = None
    if build_corpus is not None:
        parts: list[str] = []
        size, seed = 0, 0
        while size < want:
            corpus = build_corpus(seed=seed)
            for d in [*corpus.train, *corpus.val]:
                parts.append(d.text)
                size += len(d.text.encode())
                if size >= want:
                    break
            seed += 1
        return "".join(parts), "framework.corpus"
    files = sorted(ROOT.glob("labs/lab*/TASK*.md")) + sorted(ROOT.glob("framework/*.py"))
    text = "".join(p.read_text(encoding="utf-8") for p in files)
    while len(text.encode()) < want:
        text += text
    return text.encode()[:want].decode("utf-8", errors="ignore"), "handouts + framework sources"


def median_time(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    samples, out = [], None
    for _ in range(runs):
        start = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), out


def hf_tokenizer(chunks: list[str], merges: int, words: bool = False) -> Any:
    """An HF byte-level BPE trained on `chunks`: each chunk one "word" (as ours), or, with
    `words`, split by GPT-2's regex first (HF's usual set-up; another segmentation)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=words)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(
        vocab_size=len(alphabet) + merges,
        min_frequency=2,
        initial_alphabet=alphabet,
        show_progress=False,
    )
    tok.train_from_iterator(chunks, trainer=trainer)
    return tok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=300)
    parser.add_argument("--merges", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    text, source = corpus_text(args.kb)
    size = len(text.encode())
    runs = f"median of {args.runs}"
    print(f"corpus: {size / 1024:.0f} KB from {source}; {args.merges} merges; {runs}")

    t_train, tok = median_time(lambda: BPETokenizer.train(text, args.merges), args.runs)
    # cold: a fresh tokenizer (empty piece cache) per run; warm: the same text again
    t_enc, ids = median_time(lambda: BPETokenizer(tok.merges).encode(text), args.runs)
    t_warm, _ = median_time(lambda: tok.encode(text), args.runs)
    t_dec, back = median_time(lambda: tok.decode(ids, keep_tags=True), args.runs)
    assert back == text, "the round trip failed"
    print(f"  ours: train {t_train:.2f} s ({len(tok.merges)} merges), "
          f"encode {size / t_enc / 1e6:.2f} MB/s (warm cache {size / t_warm / 1e6:.2f}), "
          f"decode {size / t_dec / 1e6:.2f} MB/s, {size / len(ids):.2f} bytes per id")  # fmt: skip

    try:
        import tokenizers  # noqa: F401
    except ImportError:
        print("  HF tokenizers: not installed, skipped (.venv/bin/pip install tokenizers)")
        return
    tags = "|".join(re.escape(t) for t in CHAT_TAGS)
    chunks = [p for p in re.split(tags, text) if p]
    n_tags = len(re.findall(tags, text))  # one id each in ours: count them for HF too
    t_hf, hf = median_time(lambda: hf_tokenizer(chunks, args.merges), args.runs)
    t_hf_enc, enc = median_time(lambda: hf.encode_batch(chunks), args.runs)
    hf_ids = sum(len(e.ids) for e in enc) + n_tags
    print(f"  HF tokenizers: train {t_hf:.2f} s, encode {size / t_hf_enc / 1e6:.2f} MB/s, "
          f"{size / hf_ids:.2f} bytes per id")  # fmt: skip
    print(f"  ratios (ours / HF): train time {t_train / t_hf:.2f}x, "
          f"encode throughput {t_hf_enc / t_enc:.2f}x")  # fmt: skip
    t_w, hf_w = median_time(lambda: hf_tokenizer(chunks, args.merges, words=True), args.runs)
    t_w_enc, enc = median_time(lambda: hf_w.encode_batch(chunks), args.runs)
    w_ids = sum(len(e.ids) for e in enc) + n_tags
    print(f"  HF with GPT-2 word splitting: train {t_w:.2f} s, encode "
          f"{size / t_w_enc / 1e6:.2f} MB/s, {size / w_ids:.2f} bytes per id; ours / it: "
          f"train time {t_train / t_w:.1f}x, encode throughput {t_w_enc / t_enc:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
