"""A corpus the course makes itself: short chat dialogues in Chinese and English.

`build_corpus(seed)` writes, deterministically, three kinds of single-turn dialogue in the
chat format of lab09 (`<|system|>`, `<|user|>`, `<|assistant|>`, `<|end|>`):

- greetings ("hi", "你好吗？") with one canonical reply per meaning and language;
- small-number addition and subtraction, asked the many ways a person types them
  ("3+4=?", "what is three plus four", "3 加 4 等于几", "三加四是多少"), always answered in
  one canonical form, ``3 + 4 = 7``: short, the same in both languages, and it restates
  the operands in digits first, so that reading the question and doing the sum are two
  separate, learnable steps;
- facts about the pieces of a GPT ("what is attention?", "什么是层归一化？").

A dialogue's text is `framework.chat.format_training_example`: each message as
``"<|role|>\\n" + content + "\\n<|end|>\\n"``, so a model trained on it meets the layout
`Conversation` prompts it with (`format_chat_prompt`), and learns to close its reply with
``<|end|>``. Two sets of arithmetic questions are held out and checked by exact match:
`Corpus.heldout` asks known sums with phrasings never used for them in training (what a
user of the chat does), `Corpus.unseen` asks sums that no training dialogue contains (a
harder test: the model must have learned to add, not only looked sums up).

Deliberately not here: downloads, multi-turn memory, numbers beyond `max_operand`,
negative results. Number words live in `framework.phrasebook`.

Example:
    >>> c = build_corpus(seed=0, num_dialogues=20)
    >>> len(c.train) + len(c.val)
    20
    >>> Dialogue((("user", "1+1=?"), ("assistant", "1 + 1 = 2")), "arithmetic").text
    '<|user|>\\n1+1=?\\n<|end|>\\n<|assistant|>\\n1 + 1 = 2\\n<|end|>\\n'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from framework import phrasebook as pb
from framework.chat import format_training_example
from framework.tokenizer import Tokenizer

__all__ = [
    "Corpus",
    "Dialogue",
    "Question",
    "arithmetic_answer",
    "build_corpus",
    "encode_dialogues",
]

Message = tuple[str, str]


@dataclass(frozen=True)
class Dialogue:
    """One dialogue: its messages (the last is the assistant's reply) and its kind."""

    messages: tuple[Message, ...]
    kind: str  # "greeting" | "arithmetic" | "fact"

    @cached_property
    def text(self) -> str:
        """The training text: `format_training_example` of the messages (made once)."""
        return format_training_example(self.messages)


@dataclass(frozen=True)
class Question:
    """A held-out question: what the user types and the one right reply."""

    prompt: str
    answer: str
    lang: str  # "en" | "zh"
    a: int
    op: str  # "+" | "-"
    b: int


@dataclass(frozen=True)
class Corpus:
    """Train and validation dialogues, and two sets of held-out arithmetic questions.

    Attributes:
        train, val: dialogues; no text occurs in both.
        heldout: questions about known sums, each asked with a phrasing template that is
            never used for that sum in train or val (the model has seen the sum asked
            other ways, and the template used for other sums).
        unseen: questions about sums that occur nowhere in train or val.
        heldout_sums: the sums of `unseen`.
    """

    train: list[Dialogue]
    val: list[Dialogue]
    heldout: list[Question]
    unseen: list[Question]
    heldout_sums: frozenset[tuple[int, str, int]]


def arithmetic_answer(a: int, op: str, b: int) -> str:
    """The canonical reply to any phrasing of ``a op b``.

    Example:
        >>> arithmetic_answer(7, "-", 2)
        '7 - 2 = 5'
    """
    if op not in ("+", "-"):
        raise ValueError(f"op must be '+' or '-', got {op!r}")
    return f"{a} {op} {b} = {a + b if op == '+' else a - b}"


def _all_sums(max_operand: int) -> list[tuple[int, str, int]]:
    span = range(max_operand + 1)
    return [(a, "+", b) for a in span for b in span] + [
        (a, "-", b) for a in span for b in span if a >= b
    ]


Asked = tuple[int, str, int, str]  # (a, op, b, template)


def _arithmetic(
    rng: np.random.Generator, sums: list[tuple[int, str, int]], banned: set[Asked]
) -> Dialogue:
    while True:
        a, op, b = sums[int(rng.integers(len(sums)))]
        lang = "zh" if rng.random() < 0.5 else "en"
        template = pb.sum_template(rng, op, lang)
        if (a, op, b, template) not in banned:
            break
    ask = pb.ask_sum(rng, a, op, b, lang, template)
    return Dialogue((("user", ask), ("assistant", arithmetic_answer(a, op, b))), "arithmetic")


def _question(
    rng: np.random.Generator, a: int, op: str, b: int, lang: str, template: str
) -> Question:
    ask = pb.ask_sum(rng, a, op, b, lang, template)
    return Question(ask, arithmetic_answer(a, op, b), lang, a, op, b)


def _held_out(
    rng: np.random.Generator, sums: list[tuple[int, str, int]], count: int
) -> list[tuple[int, str, int, str, str]]:
    """`count` distinct (a, op, b, lang, template) to keep out of training, half per language."""
    picked: dict[Asked, str] = {}
    while len(picked) < count:
        a, op, b = sums[int(rng.integers(len(sums)))]
        lang = ("en", "zh")[len(picked) % 2]
        picked.setdefault((a, op, b, pb.sum_template(rng, op, lang)), lang)
    return [(a, op, b, lang, t) for (a, op, b, t), lang in picked.items()]


def _canned(rng: np.random.Generator, kind: str) -> Dialogue:
    table = pb.GREETINGS if kind == "greeting" else pb.FACTS
    lang = "zh" if rng.random() < 0.5 else "en"
    asks, reply = table[int(rng.integers(len(table)))][lang]
    ask = pb.vary(rng, asks[int(rng.integers(len(asks)))], lang)
    return Dialogue((("user", ask), ("assistant", reply)), kind)


def _with_system(rng: np.random.Generator, d: Dialogue, p_system: float) -> Dialogue:
    if rng.random() >= p_system:
        return d
    lang = "zh" if any(ord(ch) > 0x2E80 for ch in d.messages[0][1]) else "en"
    system = pb.SYSTEM[lang][int(rng.integers(len(pb.SYSTEM[lang])))]
    return Dialogue((("system", system), *d.messages), d.kind)


def build_corpus(
    seed: int = 0,
    num_dialogues: int = 40_000,
    val_fraction: float = 0.05,
    max_operand: int = 20,
    heldout_questions: int = 200,
    unseen_fraction: float = 0.05,
    mix: tuple[float, float, float] = (0.8, 0.1, 0.1),
    p_system: float = 0.1,
) -> Corpus:
    """Generate the corpus: the same seed and arguments always give the same corpus.

    Args:
        seed: seeds the one `numpy.random.Generator` that makes every choice.
        num_dialogues: dialogues to draw for train + val (duplicates kept: they are
            the frequencies of a language).
        val_fraction: share of distinct dialogue texts that go to validation only.
        max_operand: operands are 0..max_operand; subtraction never goes below 0.
        heldout_questions: size of `Corpus.heldout` (known sums, unused phrasings).
        unseen_fraction: share of the (a, op, b) sums kept out of train and val
            entirely; `Corpus.unseen` asks each of them once in each language.
        mix: shares of arithmetic, greeting and fact dialogues.
        p_system: probability that a dialogue opens with a system message.

    Returns:
        A `Corpus`.

    Raises:
        ValueError: for a fraction outside [0, 1), a bad mix or a negative size.
    """
    for name, f in (("val_fraction", val_fraction), ("unseen_fraction", unseen_fraction)):
        if not 0.0 <= f < 1.0:
            raise ValueError(f"{name} must be in [0, 1), got {f!r}")
    if num_dialogues < 1 or max_operand < 1 or heldout_questions < 0:
        raise ValueError("need num_dialogues >= 1, max_operand >= 1, heldout_questions >= 0")
    if len(mix) != 3 or min(mix) < 0 or sum(mix) <= 0:
        raise ValueError(f"mix must be three non-negative shares, got {mix!r}")
    rng = np.random.default_rng(seed)
    sums = _all_sums(max_operand)
    order = rng.permutation(len(sums))
    n_unseen = round(unseen_fraction * len(sums))
    unseen = [sums[i] for i in sorted(order[:n_unseen])]
    known = [sums[i] for i in sorted(order[n_unseen:])]
    held = _held_out(rng, known, heldout_questions)
    banned = {(a, op, b, t) for a, op, b, _, t in held}
    shares = np.asarray(mix, dtype=np.float64) / float(sum(mix))
    kinds = rng.choice(3, size=num_dialogues, p=shares)  # (N,)
    dialogues = [
        _with_system(
            rng,
            _arithmetic(rng, known, banned)
            if k == 0
            else _canned(rng, ("", "greeting", "fact")[k]),
            p_system,
        )
        for k in kinds
    ]
    texts = sorted({d.text for d in dialogues})
    val_texts = {texts[i] for i in rng.permutation(len(texts))[: int(val_fraction * len(texts))]}
    return Corpus(
        train=[d for d in dialogues if d.text not in val_texts],
        val=[d for d in dialogues if d.text in val_texts],
        heldout=[_question(rng, a, op, b, lang, t) for a, op, b, lang, t in held],
        unseen=[
            _question(rng, a, op, b, lang, pb.sum_template(rng, op, lang))
            for a, op, b in unseen
            for lang in ("en", "zh")
        ],
        heldout_sums=frozenset(unseen),
    )


def encode_dialogues(dialogues: Sequence[Dialogue], tok: Tokenizer) -> NDArray[np.int32]:
    """One token stream: BOS, then the dialogue's ids, for each dialogue in order.

    Args:
        dialogues: the dialogues, e.g. `Corpus.train`.
        tok: any `Tokenizer` (the byte tokenizer spells the tags out byte by byte).

    Returns:
        A 1-D int32 array.

    Example:
        >>> from framework.tokenizer import ByteTokenizer
        >>> d = Dialogue((("user", "hi"), ("assistant", "yo")), "greeting")
        >>> encode_dialogues([d], ByteTokenizer())[:3].tolist()
        [2, 64, 128]
    """
    ids: list[int] = []
    for d in dialogues:
        ids.append(tok.bos_id)
        ids.extend(tok.encode(d.text))
    return np.asarray(ids, dtype=np.int32)  # (N,)
