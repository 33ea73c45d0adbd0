"""Lab13 written from the handout's steps and hints, word for word."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import END_TAG, format_prompt
from framework.kv_cache import KVCache
from framework.model import GPTModel
from framework.sampling import sample_top_k

MAX_NEW_TOKENS = 32


def chat_tokenize(tok: BPETokenizer, user_input: str) -> list[int]:
    return tok.encode(format_prompt([("user", user_input)]), add_bos=True)


def chat_decode(tok: BPETokenizer, token_ids: Sequence[int]) -> str:
    return tok.decode(token_ids)


def chat_one_turn(
    model: GPTModel,
    tok: BPETokenizer,
    user_input: str,
    max_new_tokens: int,
    rng: np.random.Generator,
    temperature: float = 0.0,
    top_k: int = 0,
) -> str:
    size = model.config.max_seq_len
    if max_new_tokens < 0 or max_new_tokens >= size:  # checked first: ids[-0:] is everything
        raise ValueError(f"max_new_tokens must be in [0, {size}), got {max_new_tokens}")
    ids = chat_tokenize(tok, user_input)
    if len(ids) > size - max_new_tokens:
        ids = ids[-(size - max_new_tokens) :]
    c = model.config
    cache = KVCache(c.num_layers, c.max_seq_len, c.hidden_dim)
    logits = model.forward(ids, kv_cache=cache, start_pos=0).numpy()[-1]
    known = set(tok.known_ids())
    unknown = [i for i in range(c.vocab_size) if i not in known]
    kept: list[int] = []
    for _ in range(max_new_tokens):
        logits = logits.copy()
        logits[unknown] = -np.inf
        next_id = sample_top_k(logits, top_k, temperature, rng)
        if next_id == tok.eos_id or next_id == tok.token_id(END_TAG):
            break
        kept.append(next_id)
        position = len(ids) + len(kept) - 1  # prompt + the ids generated before this one
        logits = model.forward([next_id], kv_cache=cache, start_pos=position).numpy()[-1]
    return chat_decode(tok, kept).strip()


def chat_loop(
    model: GPTModel, tok: BPETokenizer, stdin: TextIO, stdout: TextIO, rng: np.random.Generator
) -> int:
    answered = 0
    while True:
        stdout.write("> ")
        line = stdin.readline()
        if line == "":  # EOF, tested before stripping
            return answered
        line = line.strip()
        if line == "/quit":
            return answered
        if not line:
            continue
        stdout.write("Bot: " + chat_one_turn(model, tok, line, MAX_NEW_TOKENS, rng) + "\n")
        answered += 1
