"""Lab13 — the end-to-end chat: everything from Lab01 to Lab12 wired into one program.

    user_input ─chat_tokenize─► ids ─prefill─► logits ─sample─► id ─decode step─► ... ─► ids
    ids ─chat_decode─► reply          chat_loop: "> " ─readline─► chat_one_turn ─► "Bot: ..."

The model is the course's own (`framework.shipped.load_shipped()` returns it with its BPE
tokenizer): trained on the course's chat corpus, it answers greetings and small sums in
Chinese and English. Run `make test` in this folder after every change; `TASK.md`
explains each function.

What you may use: the tokenizer (`tok.encode`, `tok.decode`, `tok.known_ids()`,
`tok.token_id("<|end|>")`, `tok.eos_id`), `framework.chat.format_prompt`, `KVCache`,
`model.forward(ids, kv_cache=..., start_pos=...)`, and `framework.sampling.sample_top_k`
(your Lab08 function, in the framework). Off limits: `framework.generate` and the other
ready-made generation loops; the point is to write the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import END_TAG, format_prompt  # noqa: F401
from framework.kv_cache import KVCache  # noqa: F401
from framework.model import GPTModel
from framework.sampling import sample_top_k  # noqa: F401

MAX_NEW_TOKENS = 32  # the longest reply chat_loop asks for


def chat_tokenize(tok: BPETokenizer, user_input: str) -> list[int]:
    """The ids the model reads before it answers `user_input`.

    BOS first, then the BPE ids of the Lab09 prompt for one user message,
    format_prompt([("user", user_input)]) = "<|user|>\\n" + user_input + "\\n<|assistant|>\\n".
    No EOS: the reply is not written yet.

    Args:
        tok: the model's BPE tokenizer.
        user_input: what the user typed.

    Returns:
        A list of ints. Example: for "hi", [2, 261, ...ids of "\\nhi\\n"..., 262, 14].

    Raises:
        TypeError: if `user_input` is not a str.
    """
    # TODO(lab13): encode the formatted prompt with BOS and without EOS.
    raise NotImplementedError("lab13: implement chat_tokenize")


def chat_decode(tok: BPETokenizer, token_ids: Sequence[int]) -> str:
    """The text of `token_ids`, with the special ids (PAD, BOS, EOS, chat tags) dropped.

    Args:
        tok: the model's BPE tokenizer.
        token_ids: a list or tuple of ids; not modified.

    Returns:
        The text. chat_decode(tok, tok.encode(s)) == s for every str s.

    Raises:
        ValueError: for an id outside the vocabulary.
    """
    # TODO(lab13): decode all the ids at once (a character's bytes may span several ids).
    raise NotImplementedError("lab13: implement chat_decode")


def chat_one_turn(
    model: GPTModel,
    tok: BPETokenizer,
    user_input: str,
    max_new_tokens: int,
    rng: np.random.Generator,
    temperature: float = 0.0,
    top_k: int = 0,
) -> str:
    """The model's reply to one user message, generated with a KV cache.

    1. ids = chat_tokenize(...); if they do not leave room for the reply, keep only the
       last max_seq_len - max_new_tokens of them.
    2. Prefill: one model.forward of all ids, at start_pos 0, into a new framework
       KVCache(num_layers, max_seq_len, hidden_dim); the last row of logits is next.
    3. Up to max_new_tokens times: set the logits of ids the tokenizer does not know
       (those not in tok.known_ids(), e.g. PAD, UNK, ids >= tok.vocab_size) to -inf,
       draw an id with sample_top_k(logits, top_k, temperature, rng); stop if it is EOS
       or <|end|>; else keep it and feed it alone, at its position, through the cache.
    4. Return chat_decode of the kept ids, with surrounding whitespace stripped.

    Args:
        model: the GPT (its config gives the cache sizes; its vocab may exceed tok's).
        tok: its BPE tokenizer.
        user_input: what the user typed.
        max_new_tokens: the most ids the reply may have, 0 <= it < model.config.max_seq_len.
        rng: the only source of randomness.
        temperature: <= 0 means greedy (the default).
        top_k: sample among the k most likely known ids (0: all of them).

    Returns:
        The reply text. Example: "1+2=?" → "1 + 2 = 3" with the course's model.

    Raises:
        ValueError: if max_new_tokens is negative or >= model.config.max_seq_len.
    """
    # TODO(lab13): tokenize, trim, prefill, then sample/stop/feed one id at a time.
    raise NotImplementedError("lab13: implement chat_one_turn")


def chat_loop(
    model: GPTModel, tok: BPETokenizer, stdin: TextIO, stdout: TextIO, rng: np.random.Generator
) -> int:
    """A read-answer loop over `stdin` and `stdout` (never the terminal itself).

    Each round writes "> " to stdout, then reads one line from stdin. EOF (readline
    returns "") or the line "/quit" ends the loop; a line that is empty once stripped is
    skipped; any other line (stripped) gets chat_one_turn(model, tok, line,
    MAX_NEW_TOKENS, rng) and one line "Bot: <reply>\\n" on stdout. Nothing else is written.

    Args:
        model, tok: as for chat_one_turn.
        stdin, stdout: text files (io.StringIO in the checks, sys.stdin/sys.stdout in a
            terminal).
        rng: passed on to chat_one_turn.

    Returns:
        The number of lines answered. Example: "hi\\n\\n/quit\\n" writes
        "> Bot: ...\\n> > " and returns 1.
    """
    # TODO(lab13): prompt, read, stop at EOF or /quit, skip blanks, answer, count.
    raise NotImplementedError("lab13: implement chat_loop")
