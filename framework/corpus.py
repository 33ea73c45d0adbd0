"""A corpus the course makes itself: short chat dialogues in Chinese and English.

`build_corpus(seed)` writes, deterministically, five kinds of dialogue (`KINDS`) in the
chat format of lab09 (`<|system|>`, `<|user|>`, `<|assistant|>`, `<|end|>`):

- greetings and thanks ("hi", "你好吗？", "yo, what's up", "thank u so much!!") with one
  canonical reply per meaning and language;
- addition and subtraction of 0..99, asked the many ways a person types them
  ("45+38=?", "what is forty-five plus thirty-eight", "45 加 38 等于几", "四十五加三十八是
  多少"), always answered in one canonical form, ``45 + 38 = 83``: short, the same in both
  languages, and it restates the operands in digits first, so that reading the question
  and doing the sum are two separate, learnable steps (the tokenizer keeps one digit per
  token, `framework.shipped_train`). A share of them is drawn from the small sums (both
  operands up to 20), so these stay as sure as they were when they were all there was;
- facts about the pieces of a GPT ("what is attention?", "什么是层归一化？");
- out-of-scope prompts (weather, names, capitals, cooking, jokes, dates, code, emoji,
  products, numbers past 99, mixed Chinese and English), all answered with the one honest
  sentence of their language (`framework.scope.HONEST`): "我只会做 0–99 的加减法、打招呼和
  回答本课程的问题。";
- two-turn conversations: the user gives a name ("我叫小明"), the model greets, and then
  the user asks the name back (the honest reply: the model does not remember names) or
  asks a sum.

A dialogue's text is `framework.chat.format_training_example`: each message as
``"<|role|>\\n" + content + "\\n<|end|>\\n"``, so a model trained on it meets the layout
`Conversation` prompts it with (`format_chat_prompt`), and learns to close its reply with
``<|end|>``. Three sets of arithmetic questions are held out and checked by exact match:
`Corpus.heldout` asks known small sums with phrasings never used for them in training
(what a user of the chat does); `Corpus.unseen` asks sums of two two-digit operands that
no training dialogue contains, and `Corpus.unseen_small` such sums of small operands (a
harder test: the model must have learned to add, not only looked sums up). The held-out
chat prompts (course questions, greetings, out-of-scope prompts) are
`framework.evaluate.chat_sets`.

Deliberately not here: downloads, remembering what the user said, numbers beyond
`max_operand` (at most 99), negative results. Number words and canned replies live in
`framework.phrasebook`, out-of-scope prompts and the honest reply in `framework.scope`.

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
from framework import scope
from framework.chat import format_training_example
from framework.tokenizer import NUM_SPECIAL, ByteTokenizer, Tokenizer

__all__ = [
    "KINDS",
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
    kind: str  # one of KINDS: "arithmetic" | "greeting" | "fact" | "offscope" | "conversation"

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
        unseen: questions about sums that occur nowhere in train or val, both operands
            two-digit (10..99), one language each.
        unseen_small: every unseen sum of small operands, asked in each language.
        heldout_sums: every sum kept out of train and val (`unseen` asks some of them).
    """

    train: list[Dialogue]
    val: list[Dialogue]
    heldout: list[Question]
    unseen: list[Question]
    unseen_small: list[Question]
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
    if kind == "greeting" and rng.random() < 0.15:  # how people type a greeting or thanks
        ask = ask.rstrip("?？!！。") + ("!!", "！！", " :)", "~", "!!!")[int(rng.integers(5))]
    return Dialogue((("user", ask), ("assistant", reply)), kind)


def _offscope(rng: np.random.Generator) -> Dialogue:
    ask = scope.offscope_prompt(rng, "zh" if rng.random() < 0.5 else "en")
    lang = "zh" if scope.is_chinese(ask) else "en"
    return Dialogue((("user", pb.vary(rng, ask, lang)), ("assistant", scope.honest_reply(ask))),
                    "offscope")  # fmt: skip


def _named(
    rng: np.random.Generator, sums: list[tuple[int, str, int]], banned: set[Asked]
) -> Dialogue:
    """Two turns: the user gives a name, then asks it back (honest reply) or asks a sum."""
    lang = "zh" if rng.random() < 0.5 else "en"
    hello = pb.GREETINGS[0][lang][1]
    then: tuple[Message, ...] = (("user", pb.vary(rng, scope.name_question(rng, lang), lang)),
            ("assistant", scope.HONEST[lang]))  # fmt: skip
    if rng.random() < 0.3:
        then = _arithmetic(rng, sums, banned).messages
    intro = ("user", pb.vary(rng, scope.introduction(rng, lang), lang))
    return Dialogue((intro, ("assistant", hello), *then), "conversation")


def _with_system(rng: np.random.Generator, d: Dialogue, p_system: float) -> Dialogue:
    if rng.random() >= p_system:
        return d
    lang = "zh" if any(ord(ch) > 0x2E80 for ch in d.messages[0][1]) else "en"
    system = pb.SYSTEM[lang][int(rng.integers(len(pb.SYSTEM[lang])))]
    return Dialogue((("system", system), *d.messages), d.kind)


KINDS = ("arithmetic", "greeting", "fact", "offscope", "conversation")


def _check(num_dialogues: int, max_operand: int, small_operand: int, fractions: dict[str, float],
           mix: tuple[float, ...]) -> None:  # fmt: skip
    for name, f in fractions.items():
        if not 0.0 <= f < 1.0:
            raise ValueError(f"{name} must be in [0, 1), got {f!r}")
    if num_dialogues < 1 or not 1 <= small_operand <= max_operand <= 99:
        raise ValueError(
            "need num_dialogues >= 1 and 1 <= small_operand <= max_operand <= 99, got "
            f"{num_dialogues}, {small_operand}, {max_operand}"
        )
    if len(mix) != len(KINDS) or min(mix) < 0 or sum(mix) <= 0:
        raise ValueError(f"mix must be {len(KINDS)} non-negative shares {KINDS}, got {mix!r}")


def _ask_each(rng: np.random.Generator, sums: Sequence[tuple[int, str, int]],
              langs: Sequence[str]) -> list[Question]:  # fmt: skip
    return [_question(rng, a, op, b, lang, pb.sum_template(rng, op, lang))
            for a, op, b in sums for lang in langs]  # fmt: skip


def build_corpus(
    seed: int = 0,
    num_dialogues: int = 100_000,
    val_fraction: float = 0.05,
    max_operand: int = 99,
    small_operand: int = 20,
    p_small: float = 0.3,
    heldout_questions: int = 200,
    unseen_fraction: float = 0.05,
    unseen_questions: int = 200,
    mix: tuple[float, ...] = (0.62, 0.07, 0.10, 0.17, 0.04),
    p_system: float = 0.1,
) -> Corpus:
    """Generate the corpus: the same seed and arguments always give the same corpus.

    Args:
        seed: seeds the one `numpy.random.Generator` that makes every choice.
        num_dialogues: dialogues to draw for train + val (duplicates kept: they are
            the frequencies of a language).
        val_fraction: share of distinct dialogue texts that go to validation only.
        max_operand: operands are 0..max_operand (at most 99); no result below 0.
        small_operand: sums of operands up to this are the small ones: `heldout` asks
            them, and a `p_small` share of the arithmetic dialogues is drawn from them.
        p_small: see `small_operand` (else a sum is drawn from all of them).
        heldout_questions: size of `Corpus.heldout` (known small sums, unused phrasings).
        unseen_fraction: share of the (a, op, b) sums kept out of train and val entirely.
        unseen_questions: size of `Corpus.unseen` (unseen sums of two two-digit operands).
        mix: shares of the `KINDS` of dialogue: arithmetic, greeting, fact, out-of-scope
            (the honest reply) and the two-turn conversation that gives a name.
        p_system: probability that a dialogue opens with a system message.

    Returns:
        A `Corpus`.

    Raises:
        ValueError: for a fraction outside [0, 1), a bad mix, size or operand range.
    """
    fractions = {"val_fraction": val_fraction, "unseen_fraction": unseen_fraction,
                 "p_small": p_small}  # fmt: skip
    _check(num_dialogues, max_operand, small_operand, fractions, mix)
    if heldout_questions < 0 or unseen_questions < 0:
        raise ValueError(f"question counts must be >= 0, got {heldout_questions}, "
                         f"{unseen_questions}")  # fmt: skip
    rng = np.random.default_rng(seed)
    sums = _all_sums(max_operand)
    order = rng.permutation(len(sums))
    unseen = {sums[i] for i in order[: round(unseen_fraction * len(sums))]}
    known = [s for s in sums if s not in unseen]
    small = [s for s in known if max(s[0], s[2]) <= small_operand]
    held = _held_out(rng, small, heldout_questions)
    banned = {(a, op, b, t) for a, op, b, _, t in held}
    shares = np.asarray(mix, dtype=np.float64) / float(sum(mix))
    kinds = rng.choice(len(KINDS), size=num_dialogues, p=shares)  # (N,)

    def draw(k: int) -> Dialogue:
        if k == 0:
            return _arithmetic(rng, small if rng.random() < p_small else known, banned)
        if k in (1, 2):
            return _canned(rng, KINDS[k])
        return _offscope(rng) if k == 3 else _named(rng, known, banned)

    dialogues = [_with_system(rng, draw(int(k)), p_system) for k in kinds]
    texts = sorted({d.text for d in dialogues})
    val_texts = {texts[i] for i in rng.permutation(len(texts))[: int(val_fraction * len(texts))]}
    two_digit = sorted(s for s in unseen if min(s[0], s[2]) >= 10)
    picked = sorted(rng.permutation(len(two_digit))[:unseen_questions])
    return Corpus(
        train=[d for d in dialogues if d.text not in val_texts],
        val=[d for d in dialogues if d.text in val_texts],
        heldout=[_question(rng, a, op, b, lang, t) for a, op, b, lang, t in held],
        unseen=[
            _ask_each(rng, [two_digit[i]], [("en", "zh")[j % 2]])[0] for j, i in enumerate(picked)
        ],
        unseen_small=_ask_each(
            rng, sorted(s for s in unseen if max(s[0], s[2]) <= small_operand), ("en", "zh")
        ),
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
    if type(tok) is ByteTokenizer:  # not a subclass: it may encode its own way
        try:
            return _byte_stream([d.text.encode("utf-8") for d in dialogues], tok.bos_id)
        except UnicodeEncodeError:
            pass  # a lone surrogate: tok.encode below names it
    ids: list[int] = []
    for d in dialogues:
        ids.append(tok.bos_id)
        ids.extend(tok.encode(d.text))
    return np.asarray(ids, dtype=np.int32)  # (N,)


def _byte_stream(texts: Sequence[bytes], bos_id: int) -> NDArray[np.int32]:
    """BOS, then ``b + NUM_SPECIAL`` for each byte b, for each of `texts`: what the loop of
    `encode_dialogues` gives for the byte tokenizer, in one pass over all the bytes (the
    loop takes a second for the course corpus, this a tenth)."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))  # (D,)
    out = np.empty(len(texts) + int(lengths.sum()), dtype=np.int32)  # (N,)
    bos_at = np.arange(len(texts)) + np.cumsum(lengths) - lengths  # (D,) each dialogue's BOS
    is_byte = np.ones(out.size, dtype=bool)
    is_byte[bos_at] = False
    out[bos_at] = bos_id
    out[is_byte] = np.frombuffer(b"".join(texts), dtype=np.uint8) + np.int32(NUM_SPECIAL)
    return out
