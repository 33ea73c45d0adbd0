"""Exact-match evaluation: ask a trained model the held-out questions, compare its replies.

Each question becomes the prompt a chat with the model starts with (BOS, then
`format_chat_prompt`: ``"<|user|>\\n" + question + "\\n<|end|>\\n<|assistant|>\\n"``, the
layout of the training dialogues); the model continues it greedily
(always the most likely next token) until it writes ``<|end|>`` or ends its first line,
and its reply is that line up to the first tag, stripped (every canonical answer is one
line, so nothing after it could make a reply right). A reply counts only if it equals the
canonical answer exactly: ``3 + 4 = 7``, not ``7``, not ``3 + 4 = 7.``.

A `GPTModel` answers as `minillm chat` would: each prompt prefills its own KV cache and
the decode steps of up to 32 replies run as one batched step
(`greedy_decode`). Any other model (anything with `forward_batch`)
answers prompts of the same length together, one whole forward per new token. Deliberately
not here: sampling (`framework.generate`), partial credit.

Example:
    >>> prompt_text("3+4=?")
    '<|user|>\\n3+4=?\\n<|end|>\\n<|assistant|>\\n'
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from framework import phrasebook as pb
from framework import scope
from framework.batching import slot_cache
from framework.chat import END_TAG, extract_response, format_chat_prompt
from framework.corpus import Corpus, Question
from framework.decode_step import StepDecoder
from framework.generate import plain_forward
from framework.model import GPTModel
from framework.tokenizer import Tokenizer
from framework.train import Trainable

__all__ = [
    "SCORECARD",
    "Ask",
    "ExactMatch",
    "broken_replies",
    "chat_sets",
    "exact_match",
    "greedy_chat",
    "greedy_decode",
    "greedy_replies",
    "honest_match",
    "multi_turn",
    "prompt_text",
    "scorecard",
]


def prompt_text(question: str, system: str | None = None) -> str:
    """The chat prompt for one user question (and an optional system message)."""
    messages = ([("system", system)] if system else []) + [("user", question)]
    return format_chat_prompt(messages)


def _first_line(text: str) -> str:
    """The reply's first line: every canonical answer is one line."""
    return text.lstrip().split("\n", 1)[0]


def _finished(text: str) -> bool:
    """True once the reply has ended (a tag) or its first line has (a newline)."""
    return END_TAG in text or "\n" in text.lstrip()


def greedy_replies(
    model: Trainable,
    tok: Tokenizer,
    questions: Sequence[str],
    max_new_tokens: int = 24,
    max_seq_len: int = 128,
) -> list[str]:
    """The model's greedy reply to each question (see the module docstring).

    Args:
        model: anything with `forward_batch` (ids [B, T] -> logits [B, T, V]).
        tok: the tokenizer the model was trained with.
        questions: what the user types.
        max_new_tokens: the longest reply, in tokens.
        max_seq_len: the model's context; prompt + reply never exceed it.

    Returns:
        One reply per question, in order.
    """
    return greedy_chat(model, tok, [[("user", q)] for q in questions], max_new_tokens,
                       max_seq_len)  # fmt: skip


def greedy_chat(
    model: Trainable,
    tok: Tokenizer,
    histories: Sequence[Sequence[tuple[str, str]]],
    max_new_tokens: int = 24,
    max_seq_len: int = 128,
) -> list[str]:
    """`greedy_replies` for whole conversations: the reply to each history of messages."""
    prompts = [[tok.bos_id, *tok.encode(format_chat_prompt(h))] for h in histories]
    budgets = [min(max_new_tokens, max_seq_len - len(p)) for p in prompts]
    if isinstance(model, GPTModel) and plain_forward(model):
        new = greedy_decode(model, prompts, budgets,
                            lambda _, ids: _finished(tok.decode(ids)))  # fmt: skip
        return [extract_response(_first_line(tok.decode(ids))) for ids in new]
    groups: dict[int, list[int]] = defaultdict(list)
    for i, p in enumerate(prompts):
        groups[len(p)].append(i)
    replies = [""] * len(prompts)
    for length, members in groups.items():
        ids = np.array([prompts[i] for i in members], dtype=np.int64)  # (b, L)
        done = np.zeros(len(members), dtype=bool)
        for _ in range(max(budgets[members[0]], 0)):
            nxt = model.forward_batch(ids)[:, -1].argmax(axis=-1)  # (b,)
            ids = np.concatenate([ids, nxt[:, None]], axis=1)  # (b, L + k)
            texts = [tok.decode(row[length:].tolist()) for row in ids]
            done |= np.array([_finished(t) for t in texts])
            if done.all():
                break
        for i, row in zip(members, ids, strict=True):
            replies[i] = extract_response(_first_line(tok.decode(row[length:].tolist())))
    return replies


@dataclass
class ExactMatch:
    """Exact-match score of a set of questions.

    Attributes:
        correct, total: counts.
        by_lang: (correct, total) per language.
        failures: (question, expected, got) for every miss.
        replies: every reply, in the questions' order.
    """

    correct: int
    total: int
    by_lang: dict[str, tuple[int, int]] = field(default_factory=dict)
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        """correct / total (0 when there are no questions)."""
        return self.correct / self.total if self.total else 0.0


def exact_match(
    model: Trainable,
    tok: Tokenizer,
    questions: Sequence[Question | Ask],
    max_seq_len: int = 128,
    max_new_tokens: int = 24,
) -> ExactMatch:
    """Ask every question, count the replies equal to the answer.

    Example:
        >>> class Parrot:  # always says "2" then <|end|>
        ...     def forward_batch(self, ids):
        ...         text = ByteTokenizer().encode("2\\n" + END_TAG)
        ...         k = ids.shape[1] - len(ByteTokenizer().encode(prompt_text("1+1"))) - 1
        ...         out = np.zeros((*ids.shape, 260), np.float32)
        ...         out[:, -1, text[min(k, len(text) - 1)]] = 1.0
        ...         return out
        >>> from framework.tokenizer import ByteTokenizer
        >>> q = Question("1+1", "2", "en", 1, "+", 1)
        >>> exact_match(Parrot(), ByteTokenizer(), [q]).accuracy
        1.0
    """
    got = greedy_replies(model, tok, [q.prompt for q in questions], max_new_tokens, max_seq_len)
    return _score(questions, got, [r == q.answer for q, r in zip(questions, got, strict=True)])


@dataclass(frozen=True)
class Ask:
    """A held-out chat prompt and its one right reply (`Question` without the sum)."""

    prompt: str
    answer: str
    lang: str  # "en" | "zh"


def chat_sets() -> dict[str, list[Ask]]:
    """The held-out chat prompts, by set: phrasings that no training dialogue uses.

    ``"course"``: the course's facts asked with new templates; ``"greetings"``: greetings
    and thanks; ``"offscope"``: out-of-scope prompts, whose answer is the honest reply.
    """
    return {
        "course": [Ask(*x) for x in pb.heldout_facts()],
        "greetings": [Ask(*x) for x in pb.heldout_greetings()],
        "offscope": [Ask(p, scope.honest_reply(p), lang) for p, lang in scope.heldout_offscope()],
    }


def _score(asks: Sequence[Ask | Question], got: Sequence[str], ok: Sequence[bool]) -> ExactMatch:
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    failures = []
    for q, reply, good in zip(asks, got, ok, strict=True):
        by_lang[q.lang][0] += good
        by_lang[q.lang][1] += 1
        if not good:
            failures.append((q.prompt, q.answer, reply))
    correct = sum(c for c, _ in by_lang.values())
    langs = {k: (c, n) for k, (c, n) in by_lang.items()}
    return ExactMatch(correct, len(asks), langs, failures, list(got))


def honest_match(
    model: Trainable, tok: Tokenizer, asks: Sequence[Ask], max_seq_len: int = 128
) -> ExactMatch:
    """Share of out-of-scope prompts answered with an honest reply (in either language:
    a prompt of emoji alone has none)."""
    got = greedy_replies(model, tok, [a.prompt for a in asks], max_new_tokens=48,
                         max_seq_len=max_seq_len)  # fmt: skip
    honest = set(scope.HONEST.values())
    return _score(asks, got, [r in honest for r in got])


_SUM = re.compile(r"\d+ [+-] \d+ = ")


def multi_turn(model: Trainable, tok: Tokenizer, max_seq_len: int = 128) -> ExactMatch:
    """A name given ("我叫小华"), then asked back ("我叫什么名字？"), names never trained on.

    The second reply is right if it names the name or is the honest reply, and never a
    sum. The first turn is prompted with the model's own reply to the introduction.
    """
    rng = np.random.default_rng(11)
    turns = [(lang, name, scope.introduction(rng, lang, name), scope.name_question(rng, lang))
             for lang, names in scope.heldout_names().items() for name in names
             for _ in range(3)]  # fmt: skip
    firsts = greedy_replies(model, tok, [t[2] for t in turns], max_seq_len=max_seq_len)
    histories = [[("user", intro), ("assistant", first), ("user", ask)]
                 for (_, _, intro, ask), first in zip(turns, firsts, strict=True)]  # fmt: skip
    got = greedy_chat(model, tok, histories, max_new_tokens=48, max_seq_len=max_seq_len)
    asks = [Ask(f"{intro} / {ask}", scope.HONEST[lang], lang) for lang, _, intro, ask in turns]
    ok = [(name in r or r in scope.HONEST.values()) and not _SUM.search(r)
          for (_, name, _, _), r in zip(turns, got, strict=True)]  # fmt: skip
    return _score(asks, got, ok)


def broken_replies(scores: Sequence[ExactMatch]) -> tuple[int, int]:
    """(replies holding U+FFFD, a broken UTF-8 sequence; all replies) over `scores`."""
    replies = [r for s in scores for r in s.replies]
    return sum("\ufffd" in r for r in replies), len(replies)


SCORECARD = {
    "heldout": "held-out questions (known small sums, new phrasings)",
    "unseen": "unseen sums, two-digit operands (in no training dialogue)",
    "unseen_small": "unseen sums, small operands (in no training dialogue)",
    "course": "course questions (new phrasings)",
    "greetings": "greetings and thanks (new phrasings)",
    "offscope": "out of scope, honest reply (new phrasings)",
    "multi_turn": "a name given, then asked: never a sum",
}


def scorecard(model: Trainable, tok: Tokenizer, corpus: Corpus) -> dict[str, ExactMatch]:
    """Every held-out figure of the course's model, by the keys of `SCORECARD`."""
    n, sets = int(model.config.max_seq_len), chat_sets()  # type: ignore[attr-defined]
    return {
        "heldout": exact_match(model, tok, corpus.heldout, n),
        "unseen": exact_match(model, tok, corpus.unseen, n),
        "unseen_small": exact_match(model, tok, corpus.unseen_small, n),
        "course": exact_match(model, tok, sets["course"], n, max_new_tokens=48),
        "greetings": exact_match(model, tok, sets["greetings"], n, max_new_tokens=48),
        "offscope": honest_match(model, tok, sets["offscope"], n),
        "multi_turn": multi_turn(model, tok, n),
    }


def greedy_decode(
    model: GPTModel,
    prompts: Sequence[Sequence[int]],
    budgets: Sequence[int],
    finished: Callable[[int, list[int]], bool],
    capacity: int = 32,
) -> list[list[int]]:
    """Greedy continuations of many prompts, their decode steps batched.

    Each prompt prefills alone (`GPTModel.forward` with its slot's cache), then every live
    sequence takes one batched step (`StepDecoder.step_batch`) per token. A sequence
    stops after `budgets[i]` tokens, or as soon as `finished(i, ids)` says its reply has
    ended; a waiting prompt takes its slot. The tokens are those of
    `framework.generate` at temperature 0 for each prompt alone (the same decode step).

    Args:
        model: a GPTModel (its plain forward: see `framework.generate.Decoder`).
        prompts: token ids of each prompt, each non-empty; prompt + reply fit the context.
        budgets: the most new tokens per prompt (0 or less: none).
        finished: (prompt index, its new ids so far) -> whether to stop there.
        capacity: sequences decoded together.

    Returns:
        The new ids of each prompt, in order.

    Raises:
        ValueError: for an empty prompt, or one with a budget > 0 that does not fit the
            context (len(prompt) + budget > max_seq_len).
    """
    stepper = StepDecoder(model)
    for i, (p, budget) in enumerate(zip(prompts, budgets, strict=True)):
        if not p or (budget > 0 and len(p) + budget > stepper.max_seq_len):
            raise ValueError(
                f"prompt {i}: {len(p)} ids and a budget of {budget} new ones must be "
                f"non-empty and fit the context of {stepper.max_seq_len}"
            )
    pool = max(1, min(capacity, len(prompts)))
    keys = np.zeros((pool, *stepper.shape), dtype=np.float32)  # (P, L, maxS, H)
    values = np.zeros_like(keys)
    out: list[list[int]] = [[] for _ in prompts]
    waiting = [i for i in range(len(prompts)) if budgets[i] > 0][::-1]  # popped from the end
    live: dict[int, tuple[int, int]] = {}  # slot -> (prompt index, position of its last id)

    def keep(slot: int, i: int, token: int, pos: int) -> None:
        out[i].append(token)
        if len(out[i]) < budgets[i] and not finished(i, out[i]):
            live[slot] = (i, pos)

    while waiting or live:
        for slot in range(pool):
            if slot not in live and waiting:
                i = waiting.pop()
                cache = slot_cache(keys, values, slot)
                logits = model.forward(list(prompts[i]), kv_cache=cache).numpy()[-1]  # (V,)
                keep(slot, i, int(logits.argmax()), len(prompts[i]))
        if not live:
            continue
        slots = sorted(live)
        rows = stepper.step_batch([out[live[s][0]][-1] for s in slots],
                                  [live[s][1] for s in slots], slots, keys, values)  # fmt: skip
        stepped = [(s, *live.pop(s)) for s in slots]
        for (slot, i, pos), row in zip(stepped, rows.argmax(axis=-1), strict=True):
            keep(slot, i, int(row), pos + 1)
    return out
