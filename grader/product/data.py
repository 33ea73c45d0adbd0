"""What a `minillm train` run reads: its tokenizer, the model it starts from, the token streams.

Two tokenizers:

- ``byte`` (the default): the byte tokenizer; each dialogue of the course's corpus is
  BOS + its text in the closed layout (`framework.corpus.encode_dialogues`); the model
  file is the lab06 format alone.
- ``bpe``: a BPE vocabulary learned on the corpus's training dialogues (`--vocab-size`
  ids), or the one in a file (`--vocab`); the corpus becomes the token stream of the
  course's shipped model, in its two layouts (`framework.shipped_train.streams`); the
  model is a checkpoint (`framework.shipped.save_checkpoint`: the weights, the sidecar
  ``<out>.meta.json`` and the vocabulary ``<out>.vocab.json``), which
  `minillm generate/chat/serve` load with that vocabulary.

A resumed run keeps its checkpoint's tokenizer: a sidecar means BPE, and a `--vocab`
with another fingerprint is refused (`framework.shipped.load_checkpoint`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.bpe_vocab import FIRST_MERGE_ID
from framework.config import ModelConfig, default_config, medium_config, tiny_config
from framework.corpus import Corpus, encode_dialogues
from framework.model import GPTModel, init_weights, model_load
from framework.shipped import load_checkpoint, meta_path
from framework.shipped_train import Recipe, learn_vocabulary, streams
from framework.tokenizer import ByteTokenizer, Tokenizer

__all__ = [
    "DEFAULT_VOCAB_SIZE",
    "MODEL_CONFIGS",
    "TokenizerChoice",
    "encode_corpus",
    "open_model",
]

# the model of each training preset (`framework.train.PRESETS` holds its schedule)
MODEL_CONFIGS = {"tiny": tiny_config, "default": default_config, "medium": medium_config}

DEFAULT_VOCAB_SIZE = FIRST_MERGE_ID + Recipe().num_merges  # the shipped model's: 1064


@dataclass(frozen=True)
class TokenizerChoice:
    """`--tokenizer`, `--vocab` and `--vocab-size` of `minillm train`."""

    kind: str | None = None  # "byte" | "bpe"; None: byte, or the checkpoint's on resume
    vocab: Path | None = None  # a BPE vocabulary file to reuse
    vocab_size: int | None = None  # ids of the BPE vocabulary to learn (or to expect)

    def resolve(self, resume: Path | None) -> str:
        """The tokenizer of this run: "byte" or "bpe".

        Raises:
            ValueError: for options that contradict each other or the checkpoint.
        """
        sidecar = None if resume is None else meta_path(resume)
        is_bpe = sidecar is not None and sidecar.is_file()
        kind = self.kind or ("bpe" if is_bpe else "byte")
        if kind == "byte" and (self.vocab or self.vocab_size):
            raise ValueError("--vocab and --vocab-size go with --tokenizer bpe")
        if sidecar is not None and kind == "bpe" and not is_bpe:
            raise ValueError(
                f"{resume} has no sidecar {sidecar.name}: it was trained with the byte "
                "tokenizer; resume it without --tokenizer bpe"
            )
        if sidecar is not None and kind == "byte" and is_bpe:
            raise ValueError(
                f"{resume} was trained with the BPE vocabulary its sidecar {sidecar.name} "
                "names; resume it with --tokenizer bpe"
            )
        return kind


def open_model(
    config: ModelConfig, choice: TokenizerChoice, resume: Path | None, corpus: Corpus, seed: int
) -> tuple[Tokenizer, GPTModel, str]:
    """The run's tokenizer and model: the checkpoint `resume`, or a fresh model.

    Args:
        config: the preset's model sizes (its vocab size is replaced by a BPE
            vocabulary's); unused when resuming.
        choice: the tokenizer options.
        resume: the checkpoint to continue, or None.
        corpus: the corpus a BPE vocabulary is learned on.
        seed: seeds a fresh model's weights.

    Returns:
        (tokenizer, model, a line that says where a BPE vocabulary comes from, or "").

    Raises:
        ValueError: for contradicting options, or a vocabulary that is not the model's.
        OSError: if a file cannot be read.
    """
    if choice.resolve(resume) == "byte":
        tok = ByteTokenizer()
        model = model_load(resume) if resume else GPTModel(config)
        if resume is None:
            init_weights(model, seed)
        if model.config.vocab_size != tok.vocab_size:
            raise ValueError(
                f"{resume}: vocab {model.config.vocab_size}, the byte corpus needs {tok.vocab_size}"
            )
        return tok, model, ""
    if resume is not None:
        model, bpe = load_checkpoint(resume, choice.vocab)
        where = f"the checkpoint's ({meta_path(resume).name})"
    else:
        bpe, where = _vocabulary(choice, corpus)
        model = GPTModel(replace(config, vocab_size=bpe.vocab_size))
        init_weights(model, seed)
    if choice.vocab_size and (resume or choice.vocab) and bpe.vocab_size != choice.vocab_size:
        raise ValueError(
            f"{choice.vocab or resume}: its vocabulary has {bpe.vocab_size} ids, "
            f"not the --vocab-size {choice.vocab_size} asked for"
        )
    return bpe, model, f"tokenizer: BPE, {bpe.vocab_size:,} ids, {where}"


def _vocabulary(choice: TokenizerChoice, corpus: Corpus) -> tuple[BPETokenizer, str]:
    """The `--vocab` file's vocabulary, or one learned on the corpus; and where it came from."""
    if choice.vocab is not None:
        return BPETokenizer.load(choice.vocab), f"from {choice.vocab}"
    tick = time.perf_counter()
    size = choice.vocab_size or DEFAULT_VOCAB_SIZE
    bpe = learn_vocabulary(corpus.train, size - FIRST_MERGE_ID)
    return bpe, f"learned on the training dialogues in {time.perf_counter() - tick:.1f} s"


def encode_corpus(corpus: Corpus, tok: Tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """The training and validation token streams of `corpus` for the run's tokenizer."""
    if isinstance(tok, BPETokenizer):
        (train_ids, _), (val_ids, _) = streams(corpus, tok, Recipe())
        return train_ids, val_ids
    return encode_dialogues(corpus.train, tok), encode_dialogues(corpus.val, tok)  # (N,), (M,)
