"""Codec benchmark (on demand, never pass/fail): the time to decode many generators.

A sandbox reply may hold thousands of generators (a sweep of seeded calls); each costs the
decoder a PCG64 construction. Measured: the median and minimum wall time of `loads` for a
list of N `Seeded` generators (``{"$seed": [...]}``, built as ``default_rng(entropy)``) and
of N exact PCG64 states (``{"$rng": [...]}``), over `--runs` runs (at least 10), with no
time budget, and the cost per generator. The frame is encoded once, outside the timing.
The decoder's own time budget is tested with a fake clock in tests/test_codec_strict.py.

    .venv/bin/python bench/codec_decode.py [--n 200000] [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from figures import record  # noqa: E402

from grader.codec import Budget, loads  # noqa: E402


def frame(doc: object) -> bytes:
    """One frame holding `doc` and no blobs (the codec's layout)."""
    raw = json.dumps(doc, separators=(",", ":")).encode()
    return struct.pack("<I", len(raw)) + raw + struct.pack("<I", 0)


def timed(data: bytes, n: int) -> float:
    start = time.perf_counter()
    out = loads(data, budget=Budget(seconds=math.inf))
    seconds = time.perf_counter() - start
    assert len(out) == n
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="generators per message")
    parser.add_argument("--runs", type=int, default=10, help="runs per message (at least 10)")
    args = parser.parse_args()
    runs = max(10, args.runs)
    print(f"decoding {args.n} generators, wall time over {runs} runs:")
    for name, doc in (
        ("seeds ($seed)", [{"$seed": [1, i]} for i in range(args.n)]),
        ("states ($rng)", [{"$rng": [i, 1, 0, 0]} for i in range(args.n)]),
    ):
        data = frame(doc)
        samples = [timed(data, args.n) for _ in range(runs)]
        med = statistics.median(samples)
        print(
            f"  {name}: median {med:.3f} s  min {min(samples):.3f} s  "
            f"({med / args.n * 1e6:.1f} µs per generator)"
        )
        record(f"codec decode, {name}", med / args.n * 1e6, "µs per generator")


if __name__ == "__main__":
    main()
