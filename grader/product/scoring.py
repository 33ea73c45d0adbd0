"""How well a model does on the course's corpus: what `minillm eval` reports.

`load_scored` reads a model with the tokenizer it was trained with (a checkpoint's BPE
vocabulary from its sidecar, else bytes); `window` is the window length its preset trained
on; `score_lines` answers the two held-out sets of arithmetic questions greedily and
compares them exactly with their canonical answers (``3 + 4 = 7``). A training run scores
itself the same way at its end (`grader.product.training`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    """The exact-match lines of the two held-out sets (and their scores)."""
    from framework.evaluate import exact_match

    out = []
    sets = (
        ("held-out questions (known sums, new phrasings)", corpus.heldout),
        ("unseen sums (in no training dialogue)         ", corpus.unseen),
    )
    for name, questions in sets:
        score = exact_match(model, tok, questions, model.config.max_seq_len)
        langs = ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(score.by_lang.items()))
        line = f"  {name}: {score.accuracy:6.1%} ({score.correct}/{score.total}; {langs})"
        out.append((line, score))
    return out
