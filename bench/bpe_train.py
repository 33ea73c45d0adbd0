"""BPE benchmark (on demand): training time for 500 merges and encode/decode throughput.

Corpus: the course's own chat corpus (`framework.corpus`) when it exists, else the
project's own handouts and framework sources; about 300 KB either way (the C course trains
its 500 merges on 19 KB). Reference: HF `tokenizers` (Rust), trained on the same chunks
(the text cut at the chat tags, no word splitting, bytes as the base alphabet, 500 merges),
reported as ratios. Skipped with a message when `tokenizers` is not installed
(`.venv/bin/pip install tokenizers`).

Each run times ours and HF back to back (the order alternates), so the machine's load
hits both alike; the ratios are medians over runs of the per-run ratio. Both sides get one
core, as the training bench gives PyTorch one thread: ours runs on one, and HF's rayon pool
is held to ``--hf-threads`` (default 1, through ``RAYON_NUM_THREADS``, set before
`tokenizers` is first used). ``--hf-threads 0`` leaves HF every core, for scale: its
`encode_batch` and trainer then run on all of them, and the ratios are not like for like.
"Cold" encoding starts from an empty cache (ours: a new `BPETokenizer`, built inside the
timing; HF: a tokenizer reloaded from its JSON), "warm" encodes the same text again.

    .venv/bin/python bench/bpe_train.py [--kb 300] [--merges 500] [--runs 10] [--hf-threads 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from figures import record  # noqa: E402

from framework.bpe_tokenizer import BPETokenizer  # noqa: E402
from framework.chat import CHAT_TAGS  # noqa: E402


def corpus_text(kb: int) -> tuple[str, str]:
    """About `kb` KB of text the project makes itself, and where it came from."""
    want = kb * 1024
    try:
        from framework.corpus import build_corpus
    except ImportError:  # a checkout without the course corpus: the handouts instead
        files = sorted(ROOT.glob("labs/lab*/TASK*.md")) + sorted(ROOT.glob("framework/*.py"))
        text = "".join(p.read_text(encoding="utf-8") for p in files)
        while len(text.encode()) < want:
            text += text
        return text.encode()[:want].decode("utf-8", errors="ignore"), "handouts + sources"
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


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds `fn()` takes, and what it returns."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


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


def _threads(text: str) -> int:
    """A thread count for --hf-threads: an int >= 0, else argparse's error names it."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected 0 (every core) or a count >= 1, got {text!r}")
    return n


def pin_hf_threads(n: int, environ: dict[str, str] | None = None) -> str:
    """Hold HF's rayon pool to `n` threads (0: every core, the user's own setting dropped)
    and say so. HF reads ``RAYON_NUM_THREADS`` when it first builds its pool, so this runs
    before `tokenizers` is used."""
    env = os.environ if environ is None else environ
    if n > 0:
        env["RAYON_NUM_THREADS"] = str(n)
        return f"{n} thread" + ("s" if n > 1 else "")
    env.pop("RAYON_NUM_THREADS", None)
    return "every core"


def goal(name: str, ratio: float, ok: bool | None, want: str) -> str:
    """One ratio's line; `ok` None: a figure for scale, judged against no goal."""
    if ok is None:
        return f"  {name}: {ratio:.2f}x (for scale: not like for like, no goal)"
    return f"  {name}: {ratio:.2f}x ({want}): goal {'met' if ok else 'NOT met'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=300)
    parser.add_argument("--merges", type=int, default=500)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--hf-threads", type=_threads, default=1, help="HF's rayon threads (0: every core)"
    )
    args = parser.parse_args()
    hf_cores = pin_hf_threads(args.hf_threads)
    text, source = corpus_text(args.kb)
    size = len(text.encode())
    print(f"corpus: {size / 1024:.0f} KB from {source}; {args.merges} merges; "
          f"{args.runs} runs, ours and HF interleaved (the order alternates), medians; "
          f"ours on 1 thread, HF on {hf_cores}")  # fmt: skip
    have_hf = importlib.util.find_spec("tokenizers") is not None
    if not have_hf:
        print("  HF tokenizers: not installed, ours only (.venv/bin/pip install tokenizers)")
    tags = "|".join(re.escape(t) for t in CHAT_TAGS)
    chunks = [p for p in re.split(tags, text) if p]
    n_tags = len(re.findall(tags, text))  # one id each in ours: count them for HF too

    def ours() -> dict[str, float]:
        t: dict[str, float] = {}
        t["train"], tok = timed(lambda: BPETokenizer.train(text, args.merges))
        # cold: a fresh tokenizer (empty caches, built inside the timing); warm: again
        t["encode"], fresh = timed(
            lambda: (lambda f: (f, f.encode(text)))(BPETokenizer(tok.merges))
        )
        t["warm"], _ = timed(lambda: fresh[0].encode(text))
        t["decode"], back = timed(lambda: tok.decode(fresh[1], keep_tags=True))
        assert back == text, "the round trip failed"
        t["ids"], t["merges"] = len(fresh[1]), len(tok.merges)
        return t

    def hf() -> dict[str, float]:
        from tokenizers import Tokenizer

        t: dict[str, float] = {}
        t["train"], tok = timed(lambda: hf_tokenizer(chunks, args.merges))
        fresh = Tokenizer.from_str(tok.to_str())  # cold: an empty cache, as ours
        t["encode"], enc = timed(lambda: fresh.encode_batch(chunks))
        t["warm"], _ = timed(lambda: fresh.encode_batch(chunks))
        t["ids"] = sum(len(e.ids) for e in enc) + n_tags
        t["train_words"], tok_w = timed(lambda: hf_tokenizer(chunks, args.merges, words=True))
        fresh_w = Tokenizer.from_str(tok_w.to_str())
        t["encode_words"], enc = timed(lambda: fresh_w.encode_batch(chunks))
        t["ids_words"] = sum(len(e.ids) for e in enc) + n_tags
        return t

    rows: dict[str, list[dict[str, float]]] = {"ours": [], "hf": []}
    for run in range(args.runs):
        sides = [("ours", ours), ("hf", hf)] if have_hf else [("ours", ours)]
        for name, fn in sides if run % 2 == 0 else sides[::-1]:
            rows[name].append(fn())

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in rows[name])

    def ratio(key: str, hf_key: str | None = None, speed: bool = False) -> float:
        """Median over runs of ours / HF (time) or HF / ours (throughput), run by run."""
        pairs = zip(rows["ours"], rows["hf"], strict=True)
        hk = hf_key or key
        return statistics.median(h[hk] / o[key] if speed else o[key] / h[hk] for o, h in pairs)

    mb = size / 1e6
    print(f"  ours: train {med('ours', 'train'):.3f} s ({med('ours', 'merges'):.0f} merges), "
          f"encode {mb / med('ours', 'encode'):.2f} MB/s (warm cache "
          f"{mb / med('ours', 'warm'):.2f}), decode {mb / med('ours', 'decode'):.2f} MB/s, "
          f"{size / med('ours', 'ids'):.2f} bytes per id")  # fmt: skip
    if not have_hf:
        return
    print(f"  HF tokenizers: train {med('hf', 'train'):.3f} s, encode "
          f"{mb / med('hf', 'encode'):.2f} MB/s (warm cache {mb / med('hf', 'warm'):.2f}), "
          f"{size / med('hf', 'ids'):.2f} bytes per id")  # fmt: skip
    print(f"  HF with GPT-2 word splitting (another segmentation, for scale): train "
          f"{med('hf', 'train_words'):.3f} s, encode {mb / med('hf', 'encode_words'):.2f} MB/s, "
          f"{size / med('hf', 'ids_words'):.2f} bytes per id")  # fmt: skip
    print(f"ratios, ours / HF, median of {args.runs} interleaved runs:")
    train = ratio("train")
    enc = ratio("encode", speed=True)
    judged = args.hf_threads == 1  # the goals are for one core each
    print(goal("train time", train, train <= 1.0 if judged else None, "goal <= 1.0"))
    print(goal("encode throughput, both cold", enc, enc >= 1.0 if judged else None, "goal >= 1.0"))
    if judged:
        record("BPE train time / HF", train, "x", "<= 1.0", train <= 1.0)
        record("BPE encode throughput / HF (both cold)", enc, "x", ">= 1.0", enc >= 1.0)
    else:  # for scale only: not like for like
        record(f"BPE train time / HF on {hf_cores}", train, "x")
        record(f"BPE encode throughput / HF on {hf_cores} (both cold)", enc, "x")
    cold_warm = ratio("encode", "warm", speed=True)
    print(f"  encode throughput, ours cold / HF warm: {cold_warm:.2f}x; "
          f"both warm: {ratio('warm', speed=True):.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
