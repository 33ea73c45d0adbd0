"""Exact-match evaluation: ask a trained model the held-out questions, compare its replies.

Each question becomes the prompt a chat with the model starts with (BOS, then
`format_chat_prompt`: ``"<|user|>\\n" + question + "\\n<|end|>\\n<|assistant|>\\n"``, the
layout of the training dialogues); the model continues it greedily
(always the most likely next token) until it writes ``<|end|>`` or ends its first line,
and its reply is that line up to the first tag, stripped (every canonical answer is one
line, so nothing after it could make a reply right). A reply counts only if it equals the
canonical answer exactly: ``3 + 4 = 7``, not ``7``, not ``3 + 4 = 7.``.

Prompts of the same length are decoded together, as one batch through
`forward_batch`: a few dozen forward passes answer a hundred questions. Deliberately not
here: sampling and the KV cache (`framework.generate`), partial credit.

Example:
    >>> prompt_text("3+4=?")
    '<|user|>\\n3+4=?\\n<|end|>\\n<|assistant|>\\n'
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from framework.chat import END_TAG, extract_response, format_chat_prompt
from framework.corpus import Question
from framework.tokenizer import Tokenizer
from framework.train import Trainable

__all__ = ["ExactMatch", "exact_match", "greedy_replies", "prompt_text"]


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
    prompts = [[tok.bos_id, *tok.encode(prompt_text(q))] for q in questions]
    groups: dict[int, list[int]] = defaultdict(list)
    for i, p in enumerate(prompts):
        groups[len(p)].append(i)
    replies = [""] * len(prompts)
    for length, members in groups.items():
        ids = np.array([prompts[i] for i in members], dtype=np.int64)  # (b, L)
        budget = min(max_new_tokens, max_seq_len - length)
        done = np.zeros(len(members), dtype=bool)
        for _ in range(max(budget, 0)):
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
    """

    correct: int
    total: int
    by_lang: dict[str, tuple[int, int]] = field(default_factory=dict)
    failures: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        """correct / total (0 when there are no questions)."""
        return self.correct / self.total if self.total else 0.0


def exact_match(
    model: Trainable, tok: Tokenizer, questions: Sequence[Question], max_seq_len: int = 128
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
    got = greedy_replies(model, tok, [q.prompt for q in questions], max_seq_len=max_seq_len)
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    failures = []
    for q, reply in zip(questions, got, strict=True):
        ok = reply == q.answer
        by_lang[q.lang][0] += ok
        by_lang[q.lang][1] += 1
        if not ok:
            failures.append((q.prompt, q.answer, reply))
    correct = sum(c for c, _ in by_lang.values())
    return ExactMatch(
        correct, len(questions), {k: (c, n) for k, (c, n) in by_lang.items()}, failures
    )
