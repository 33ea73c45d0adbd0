"""How the course's chat model is made: corpus → BPE → a training stream in two layouts → GPT.

``make model`` runs `main`, which rebuilds `framework/data/` from nothing but the code:

1. The corpus (`framework.corpus.build_corpus`, seed 0): greetings, sums and differences
   of 0..99, facts about a GPT, out-of-scope prompts with the honest reply, and two-turn
   conversations that give a name, in Chinese and English.
2. A BPE vocabulary (`BPETokenizer.train`) learned from the messages' contents with every
   digit and newline as a boundary, so that no merge contains a digit or a newline: a
   number is always one token per digit (as in LLaMA's tokenizer), which makes the sums
   learnable, and the ``\\n`` that ends every prompt is a token of its own, as it is in
   the training text.
3. A token stream: BOS, then one dialogue, and so on. Each dialogue is written in one of
   two layouts, chosen at random: the corpus's closed one, in which every message ends
   with ``<|end|>`` (what `Conversation` and `framework.evaluate` prompt with), and the
   lab09 prompt layout, in which the question is not closed (``format_prompt``, what lab13
   sends); in both the reply ends with ``\\n<|end|>``. Some dialogues follow the previous
   one without a BOS, as the next turn of a conversation.
4. Training (`framework.train.train`) on windows of the whole context (128 ids) that start
   where a dialogue starts: every position the chat uses is trained, and a window holds
   several dialogues, some of them joined as the turns of one conversation.
5. The checkpoint (`framework.shipped.save_checkpoint`) and a report in its sidecar: the
   corpus's fingerprint (a test notices when the corpus changes and the model must be
   rebuilt), validation loss, exact match on the held-out arithmetic (known small sums
   asked in new ways, unseen two-digit and small sums) in both layouts and in a
   conversation, and every figure `minillm eval` prints (`framework.evaluate.scorecard`:
   course questions, greetings, the honest reply out of scope, a name given then asked,
   replies holding U+FFFD), sample replies.

Every random choice comes from a seed, so the same code gives the same files (with one
BLAS thread, as ``make model`` runs it): `Recipe.seed` makes the corpus, its held-out sets
and the layouts; `Recipe.init_seed` the initial weights and the order of the training
windows, so that runs differing only in it are measured on the same held-out sets. Not here:
the files' format and loading (`framework.shipped`).

Example:
    >>> bpe_text([Dialogue((("user", "1+12=?"), ("assistant", "1 + 12 = 13")), "arithmetic")])
    '+<|end|>=?<|end|> + <|end|> = '
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import END_TAG, Conversation, format_prompt, format_training_example
from framework.config import ModelConfig
from framework.corpus import Corpus, Dialogue, Question, build_corpus
from framework.dataloader import WindowLoader
from framework.evaluate import ExactMatch, scorecard
from framework.generate import GenerateConfig, generate
from framework.model import GPTModel, init_weights
from framework.optimizer import AdamW
from framework.shipped import DATA_DIR, save_checkpoint
from framework.train import Progress, TrainConfig, train

__all__ = [
    "Recipe",
    "bpe_text",
    "build",
    "chat_reply",
    "conversation",
    "corpus_fingerprint",
    "dialogue_text",
    "encode_stream",
    "exact_match",
    "learn_vocabulary",
    "main",
    "report",
    "streams",
    "val_stream",
]

_BOUNDARY = re.compile(r"[0-9\n]")


@dataclass
class Recipe:
    """Everything that decides the shipped model (the defaults are the shipped one)."""

    seed: int = 0  # corpus, layouts and the held-out sets
    init_seed: int = 0  # initial weights and the order of the training windows
    num_merges: int = 800  # BPE merges: vocab = 264 + merges
    hidden_dim: int = 64
    num_heads: int = 4
    num_layers: int = 4
    ffn_dim: int = 256
    max_seq_len: int = 128
    p_open: float = 0.5  # share of dialogues in the lab09 prompt layout
    p_join: float = 0.2  # share of dialogues that continue the previous one (no BOS)
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(
            steps=6000, batch_size=16, seq_len=128, lr=5e-3, min_lr=3e-4, warmup=100,
            weight_decay=0.1, eval_every=1000, eval_batches=16,
        )
    )  # fmt: skip

    def model_config(self, vocab_size: int) -> ModelConfig:
        """The GPT's sizes for a vocabulary of `vocab_size` ids."""
        return ModelConfig(vocab_size, self.hidden_dim, self.num_heads, self.num_layers,
                           self.ffn_dim, self.max_seq_len).validate()  # fmt: skip


def bpe_text(dialogues: Sequence[Dialogue]) -> str:
    """The BPE training text: message contents, cut at digits and newlines by ``<|end|>``.

    `BPETokenizer.train` never merges across a tag, so no merge spans a cut.
    """
    pieces = (p for d in dialogues for _, c in d.messages for p in _BOUNDARY.split(c) if p)
    return END_TAG.join(pieces)


def dialogue_text(d: Dialogue, open_layout: bool) -> str:
    """`d` in the closed layout (its `text`) or in the lab09 prompt layout plus the reply.

    Example:
        >>> d = Dialogue((("user", "hi"), ("assistant", "Hello!")), "greeting")
        >>> dialogue_text(d, open_layout=True)
        '<|user|>\\nhi\\n<|assistant|>\\nHello!\\n<|end|>\\n'
    """
    if not open_layout:
        return format_training_example(d.messages)
    return format_prompt(d.messages[:-1]) + d.messages[-1][1] + "\n" + END_TAG + "\n"


def encode_stream(
    dialogues: Sequence[Dialogue], tok: BPETokenizer, seed: int, p_open: float, p_join: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The token stream of `dialogues` (see step 3 of the module docstring).

    Returns:
        (ids, starts): the 1-D stream and the positions of its BOS ids.
    """
    rng = np.random.default_rng(seed)
    opened = rng.random(len(dialogues)) < p_open  # (N,)
    joined = rng.random(len(dialogues)) < p_join  # (N,)
    ids: list[int] = []
    starts: list[int] = []
    for d, op, join in zip(dialogues, opened, joined, strict=True):
        if not (join and ids and d.messages[0][0] == "user"):
            starts.append(len(ids))
            ids.append(tok.bos_id)
        ids.extend(tok.encode(dialogue_text(d, bool(op))))
    return np.asarray(ids, dtype=np.int64), np.asarray(starts, dtype=np.int64)


def chat_reply(
    model: GPTModel, tok: BPETokenizer, question: str, open_layout: bool, max_new: int = 40
) -> str:
    """The model's greedy reply to one question, prompted in one of the two layouts."""
    text = dialogue_text(Dialogue((("user", question), ("assistant", "")), "x"), open_layout)
    prompt = text[: text.index("<|assistant|>\n") + len("<|assistant|>\n")]
    end = tok.token_id(END_TAG)
    cfg = GenerateConfig(max_new_tokens=max_new, temperature=0.0, top_k=0, top_p=1.0,
                         stop_ids=(end,))  # fmt: skip
    return generate(model, tok, prompt, cfg).text.strip()


def conversation(
    model: GPTModel, tok: BPETokenizer, questions: Sequence[str], reply_room: int = 64
) -> list[str]:
    """Greedy replies to `questions` asked one after the other in one `Conversation`.

    Each prompt is `Conversation.prompt_ids` with `reply_room` ids left for the reply (as
    `minillm chat` builds it): the earlier turns stay while they fit.
    """
    conv, replies = Conversation(), []
    cfg = GenerateConfig(max_new_tokens=reply_room, temperature=0.0, top_k=0, top_p=1.0,
                         stop_ids=(tok.token_id(END_TAG),))  # fmt: skip
    for q in questions:
        conv.add("user", q)
        ids = conv.prompt_ids(tok, model.config.max_seq_len - reply_room)
        replies.append(generate(model, tok, ids, cfg).text.strip())
        conv.add("assistant", replies[-1])
    return replies


SAMPLES = ("你好", "1+2=?", "三加四等于几", "你是谁", "hello", "what is 5 plus 3", "7-2=?",
           "what is attention?", "谢谢", "45 + 38 = ?", "九十减二十七等于几", "今天天气怎么样？",
           "yo, what's up?", "thank u so much!!", "what is the capital of France?")  # fmt: skip
NAMED = ("我叫小明", "我叫什么名字？")  # the multi-turn sample: a name given, then asked


def exact_match(
    model: GPTModel, tok: BPETokenizer, questions: Sequence[Question], open_layout: bool
) -> dict[str, float]:
    """Share of greedy replies equal to the answer: in all and per language."""
    right: dict[str, list[bool]] = {"all": [], "en": [], "zh": []}
    for q in questions:
        ok = chat_reply(model, tok, q.prompt, open_layout) == q.answer
        right["all"].append(ok)
        right[q.lang].append(ok)
    return {k: round(sum(v) / len(v), 4) for k, v in right.items() if v}


def corpus_fingerprint(corpus: Corpus) -> str:
    """``"sha256:<hex>"`` of the training and validation texts: the model's input data."""
    digest = hashlib.sha256()
    for d in (*corpus.train, *corpus.val):
        digest.update(d.text.encode("utf-8") + b"\0")
    return "sha256:" + digest.hexdigest()


def _shares(score: ExactMatch) -> dict[str, float]:
    shares = {"all": score.accuracy, **{k: c / n for k, (c, n) in score.by_lang.items()}}
    return {k: round(v, 4) for k, v in sorted(shares.items(), key=lambda kv: kv[0] != "all")}


def report(model: GPTModel, tok: BPETokenizer, corpus: Corpus) -> dict[str, Any]:
    """Every held-out figure: the arithmetic sets in both layouts and in a conversation,
    and, in the closed layout `minillm eval` uses, course questions, greetings, the honest
    reply out of scope and the multi-turn name check (`framework.evaluate.scorecard`);
    replies holding U+FFFD; sample replies."""
    card = scorecard(model, tok, corpus)
    broken = sum("\ufffd" in r for s in card.values() for r in s.replies)
    return {
        "heldout_questions": len(corpus.heldout),
        "heldout_exact_match_closed_layout": _shares(card["heldout"]),
        "heldout_exact_match_lab13_layout": exact_match(model, tok, corpus.heldout, True),
        "unseen_questions": len(corpus.unseen),
        "unseen_exact_match_closed_layout": _shares(card["unseen"]),
        "unseen_exact_match_lab13_layout": exact_match(model, tok, corpus.unseen, True),
        "unseen_small_questions": len(corpus.unseen_small),
        "unseen_small_exact_match_closed_layout": _shares(card["unseen_small"]),
        "unseen_small_exact_match_lab13_layout": exact_match(model, tok, corpus.unseen_small, True),
        "heldout_exact_match_in_conversation": in_conversation(model, tok, corpus.heldout),
        **{f"{k}_questions": card[k].total for k in ("course", "greetings", "offscope")},
        "course_exact_match": _shares(card["course"]),
        "greetings_exact_match": _shares(card["greetings"]),
        "offscope_honest": _shares(card["offscope"]),
        "multi_turn_name": _shares(card["multi_turn"]),
        "replies_with_fffd": broken,
        "samples": {q: chat_reply(model, tok, q, True) for q in SAMPLES},
        "conversation": list(zip(SAMPLES, conversation(model, tok, SAMPLES), strict=True)),
        "named_conversation": list(zip(NAMED, conversation(model, tok, NAMED), strict=True)),
    }


def in_conversation(model: GPTModel, tok: BPETokenizer, questions: Sequence[Question]) -> float:
    """Exact match when the questions are asked four at a time in one conversation."""
    right = 0
    for k in range(0, len(questions), 4):
        group = questions[k : k + 4]
        got = conversation(model, tok, [q.prompt for q in group])
        right += sum(a == q.answer for a, q in zip(got, group, strict=True))
    return round(right / max(len(questions), 1), 4)


Stream = tuple[NDArray[np.int64], NDArray[np.int64]]


def learn_vocabulary(dialogues: Sequence[Dialogue], num_merges: int) -> BPETokenizer:
    """Step 2: a BPE vocabulary of at most ``264 + num_merges`` ids learned from `dialogues`."""
    return BPETokenizer.train(bpe_text(dialogues), num_merges)


def streams(corpus: Corpus, tok: BPETokenizer, recipe: Recipe) -> tuple[Stream, Stream]:
    """Step 3 for the training dialogues (seed) and the validation ones (`val_stream`)."""
    r = recipe
    return encode_stream(corpus.train, tok, r.seed, r.p_open, r.p_join), val_stream(corpus, tok, r)


def val_stream(corpus: Corpus, tok: BPETokenizer, recipe: Recipe) -> Stream:
    """Step 3 for the validation dialogues alone (seed + 1): what a validation loss reads."""
    return encode_stream(corpus.val, tok, recipe.seed + 1, recipe.p_open, recipe.p_join)


def prepare(recipe: Recipe) -> tuple[Corpus, BPETokenizer, Stream, Stream]:
    """Steps 1-3: the corpus, its BPE tokenizer, the training and validation streams."""
    corpus = build_corpus(seed=recipe.seed)
    tok = learn_vocabulary(corpus.train, recipe.num_merges)
    return corpus, tok, *streams(corpus, tok, recipe)


def build(out_dir: Path, recipe: Recipe, log: Callable[[str], object] = print) -> dict[str, Any]:
    """Make the model and write `chat_model.bin`, its sidecar and `chat_vocab.json`.

    Returns:
        The facts written to the sidecar (recipe, timings, losses, scores, samples).
    """
    tick = time.perf_counter()
    corpus, tok, (ids, starts), (val_ids, val_starts) = prepare(recipe)
    log(f"corpus and BPE: {tok.vocab_size} ids, {time.perf_counter() - tick:.0f} s")
    cfg = recipe.train
    model = GPTModel(recipe.model_config(tok.vocab_size))
    init_weights(model, recipe.init_seed)
    loader = WindowLoader(ids, cfg.batch_size, cfg.seq_len, recipe.init_seed, starts)
    opt = AdamW(model.parameters(), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps,
                weight_decay=cfg.weight_decay)  # fmt: skip
    log(f"{model.num_parameters():,} parameters, {ids.size:,} training tokens, {cfg.steps} steps")

    def show(p: Progress) -> None:
        if p.step % 100 == 0 or p.val_loss is not None:
            val = "" if p.val_loss is None else f"  val {p.val_loss:.4f}"
            log(f"step {p.step:>5}/{p.steps}  loss {p.loss:.4f}{val}  {p.elapsed:6.0f} s")
        if p.val_loss is not None and p.step < p.steps:  # a glance: 40 questions of each set
            small = exact_match(model, tok, corpus.heldout[:40], True)["all"]
            two = exact_match(model, tok, corpus.unseen[:40], True)["all"]
            log(f"  lab13 layout: small sums {small:.0%}, unseen two-digit sums {two:.0%}")

    result = train(model, loader, val_ids, cfg, opt, callbacks=[show], val_starts=val_starts)
    info: dict[str, Any] = {
        "recipe": {**asdict(recipe), "train": asdict(cfg)},
        "corpus_sha256": corpus_fingerprint(corpus),
        "parameters": model.num_parameters(),
        "train_seconds": round(result.seconds, 1),
        "train_loss": round(result.loss, 4),
        "val_loss": None if result.val_loss is None else round(result.val_loss, 4),
        **report(model, tok, corpus),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    save_checkpoint(model, tok, out_dir / "chat_model.bin", out_dir / "chat_vocab.json", info)
    return info


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m framework.shipped_train [--out DIR] [--steps N]``: build and report."""
    parser = argparse.ArgumentParser(prog="python -m framework.shipped_train")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="where to write the files")
    parser.add_argument("--steps", type=int, default=None, help="training steps (a quick try)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a Recipe field, e.g. hidden_dim=96 or train.lr=0.002",
    )
    args = parser.parse_args(argv)
    recipe = Recipe()
    for item in args.set:
        key, _, value = item.partition("=")
        target = recipe.train if key.startswith("train.") else recipe
        key = key.removeprefix("train.")
        setattr(target, key, type(getattr(target, key))(value))
    if args.steps is not None:
        recipe.train.steps = args.steps
        recipe.train.eval_every = max(1, min(recipe.train.eval_every, args.steps))
    info = build(args.out, recipe, lambda s: print(s, flush=True))
    print(json.dumps(info, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
