"""How well a model does on the course's corpus: what `minillm eval` reports.

`load_scored` reads a model with the tokenizer it was trained with (a checkpoint's BPE
vocabulary from its sidecar, else bytes); `window` is the window length its preset trained
on; `score_lines` answers every held-out set greedily (`framework.evaluate.scorecard`):
arithmetic (known small sums asked in new ways, unseen two-digit and small sums),
course questions and greetings, compared exactly with their canonical answers
(``3 + 4 = 7``); out-of-scope prompts, which must get the honest reply; a name given then
asked back; and it counts the replies that hold U+FFFD. A training run scores
itself the same way at its end (`grader.product.training`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from framework.config import ModelConfig
    from framework.corpus import Corpus
    from framework.evaluate import ExactMatch
    from framework.model import GPTModel
    from framework.tokenizer import Tokenizer

__all__ = ["course_corpus", "load_scored", "score_lines", "window"]


def load_scored(model_path: Path) -> tuple[GPTModel, Tokenizer]:
    """The model and its tokenizer: a checkpoint's BPE vocabulary (its sidecar beside it),
    else the byte tokenizer.

    Raises:
        ValueError: a file that does not fit (its message says why).
    """
    from framework.model import model_load
    from framework.shipped import load_checkpoint, meta_path
    from framework.tokenizer import ByteTokenizer

    sidecar = meta_path(model_path)
    if sidecar.is_file():
        return load_checkpoint(model_path)
    model = model_load(model_path)
    tok = ByteTokenizer()
    if model.config.vocab_size != tok.vocab_size:
        raise ValueError(
            f"{model_path} has vocab {model.config.vocab_size}, not the byte tokenizer's "
            f"{tok.vocab_size}, and no sidecar {sidecar.name} names its BPE vocabulary"
        )
    return model, tok


def window(config: ModelConfig) -> int:
    """The window length of the preset that trained a model of this size (else 96)."""
    from framework.train import PRESETS
    from grader.product.data import MODEL_CONFIGS

    for name, make in MODEL_CONFIGS.items():
        if make() == config:
            return min(PRESETS[name].seq_len, int(config.max_seq_len))
    return min(96, int(config.max_seq_len))


@cache
def course_corpus() -> Corpus:
    """The course's corpus (`build_corpus()` with its defaults), built once per process."""
    from framework.corpus import build_corpus

    return build_corpus()


def score_lines(model: GPTModel, tok: Tokenizer, corpus: Corpus) -> list[tuple[str, ExactMatch]]:
    """The lines of every held-out figure (`framework.evaluate.SCORECARD`) and their scores:
    the arithmetic sets, course questions, greetings, the honest reply out of scope, the
    multi-turn name check, and last the replies free of U+FFFD (a broken character)."""
    from framework.evaluate import SCORECARD, ExactMatch, scorecard

    scores = scorecard(model, tok, corpus)
    width = max(len(name) for name in SCORECARD.values())
    out = []
    for key, score in scores.items():
        langs = ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(score.by_lang.items()))
        name = SCORECARD[key].ljust(width)
        line = f"  {name}: {score.accuracy:6.1%} ({score.correct}/{score.total}; {langs})"
        out.append((line, score))
    replies = [(r, key) for key, s in scores.items() for r in s.replies]
    broken = [(key, "no U+FFFD", r) for r, key in replies if "\ufffd" in r]
    clean = ExactMatch(len(replies) - len(broken), len(replies), failures=broken)
    name = "greedy replies free of U+FFFD".ljust(width)
    out.append((f"  {name}: {clean.accuracy:6.1%} ({clean.correct}/{clean.total})", clean))
    return out


def recorded_validation(
    model_path: Path, tok: Tokenizer
) -> tuple[np.ndarray, np.ndarray, int, int, int, float | None] | None:
    """How the run that made a checkpoint measured its validation loss, when its sidecar
    records the recipe (``make model``): (stream, window starts, batch size, window length,
    batches, the recorded loss). None for a checkpoint without one."""
    from framework.bpe_tokenizer import BPETokenizer
    from framework.corpus import build_corpus
    from framework.shipped import meta_path, read_meta
    from framework.shipped_train import Recipe, val_stream

    if not meta_path(model_path).is_file() or not isinstance(tok, BPETokenizer):
        return None
    meta = read_meta(model_path)
    recipe = meta.get("recipe")
    if not isinstance(recipe, dict):
        return None
    train = recipe.get("train", {})
    sizes = [_whole(train, k, d) for k, d in (("batch_size", 16), ("seq_len", 128))]
    batches, seed = _whole(train, "eval_batches", 16), _whole(recipe, "seed", 0, lo=0)
    shares = [recipe.get(k, d) for k, d in (("p_open", 0.5), ("p_join", 0.2))]
    if None in (*sizes, batches, seed) or not all(
        isinstance(x, int | float) and not isinstance(x, bool) and 0 <= x <= 1 for x in shares
    ):
        return None  # a sidecar that says nothing usable: eval measures its own way
    made = Recipe(seed=int(seed or 0), p_open=float(shares[0]), p_join=float(shares[1]))
    corpus = course_corpus() if made.seed == 0 else build_corpus(seed=made.seed)
    val_ids, val_starts = val_stream(corpus, tok, made)
    recorded = meta.get("val_loss")
    return (
        val_ids,
        val_starts,
        int(sizes[0] or 0),
        int(sizes[1] or 0),
        int(batches or 0),
        float(recorded) if isinstance(recorded, int | float) else None,
    )


def _whole(d: object, key: str, default: int, lo: int = 1) -> int | None:
    """`d[key]` (or `default`) when it is an int >= `lo`, else None."""
    v = d.get(key, default) if isinstance(d, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= lo else None
