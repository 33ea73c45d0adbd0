"""What `--mine` costs: generation through the reference solutions' pieces vs the framework.

The shipped chat model when it is installed (else a random default-size model with the
byte tokenizer), a 64-token prompt, 64 new tokens, greedy, EOS ignored so every run makes
all 64. "framework" is `framework.generate.generate`; "all pieces" runs every piece a lab
covers through `solutions/labNN/student.py` (what a student who finished every lab runs
with `minillm chat --mine`); then each piece alone, to show where the time goes. Both runs
must make the same tokens. Fastest of --runs N (default 3): on a shared machine, the run
least disturbed by others.

    .venv/bin/python bench/mine.py [--runs N]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.config import default_config
from framework.generate import GenerateConfig, generate
from framework.model import GPTModel, init_weights
from framework.serving import load_chat_model, shipped_model
from framework.tokenizer import ByteTokenizer, Tokenizer
from grader.labs import LabInfo
from grader.mine.choose import student_functions
from grader.mine.engine import generate_mine
from grader.mine.load import load_lab_module
from grader.mine.pieces import CATALOGUE, Pieces

ROOT = Path(__file__).resolve().parent.parent
PROMPT, NEW = 64, 64


def solution_pieces(tok: Tokenizer) -> dict[str, Pieces]:
    """Each piece the solutions can fill, alone, and all of them together ("all pieces")."""
    out, everything = {}, Pieces()
    for piece in CATALOGUE:
        folder = ROOT / "solutions" / piece.lab
        if piece.key == "http" or not (folder / "student.py").is_file():
            continue
        if piece.key == "bpe" and not isinstance(tok, BPETokenizer):
            continue
        functions = student_functions(piece, load_lab_module(LabInfo(piece.lab, folder)))
        out[piece.title.en] = Pieces().with_piece(piece.key, functions)
        everything = everything.with_piece(piece.key, functions)
    return {"all pieces": everything, **out}


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    model_path, vocab_path = shipped_model()
    if model_path.is_file():
        engine = load_chat_model(model_path, vocab_path if vocab_path.is_file() else None)
        model, tok, name = engine.model, engine.tokenizer, "the shipped model"
    else:
        model, tok, name = GPTModel(default_config()), ByteTokenizer(), "a random default model"
        init_weights(model, 0)
    ids = np.random.default_rng(0).integers(4, min(700, tok.vocab_size), size=PROMPT)
    text = tok.decode(ids.tolist())
    cfg = GenerateConfig(max_new_tokens=NEW, temperature=0, stop_at_eos=False)
    first = generate(model, tok, text, cfg)  # warm-up, and the tokens to match
    want, n = first.token_ids, len(first.prompt_ids)
    print(f"{name}, {n}-token prompt, {NEW} new tokens, greedy, fastest of {runs}")
    base = min(_time(lambda: generate(model, tok, text, cfg)) for _ in range(runs))
    print(f"  {'framework':20s} {NEW / base:8.1f} tokens/s  {base * 1e3 / NEW:6.2f} ms/token")
    for label, pieces in solution_pieces(tok).items():
        got = generate_mine(pieces, model, tok, text, cfg).token_ids
        s = min(
            _time(lambda p=pieces: generate_mine(p, model, tok, text, cfg)) for _ in range(runs)
        )
        same = "same tokens" if got == want else "DIFFERENT tokens"
        print(f"  {label:20s} {NEW / s:8.1f} tokens/s  {s * 1e3 / NEW:6.2f} ms/token  "
              f"{s / base:5.1f}x the framework's time  {same}")  # fmt: skip


def _time(run: object) -> float:
    start = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
