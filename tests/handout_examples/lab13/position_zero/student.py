"""Lab13 with the C course's bug: each decode step feeds the new token at position 0."""

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
    c = model.config
    if not 0 <= max_new_tokens < c.max_seq_len:
        raise ValueError(f"max_new_tokens must be in [0, {c.max_seq_len}), got {max_new_tokens}")
    ids = chat_tokenize(tok, user_input)[-(c.max_seq_len - max_new_tokens) :]
    known = np.zeros(c.vocab_size, dtype=bool)
    known[[i for i in tok.known_ids() if i < c.vocab_size]] = True
    cache = KVCache(c.num_layers, c.max_seq_len, c.hidden_dim)
    logits = model.forward(ids, kv_cache=cache, start_pos=0).numpy()[-1]
    reply: list[int] = []
    for _ in range(max_new_tokens):
        next_id = sample_top_k(np.where(known, logits, -np.inf), top_k, temperature, rng)
        if next_id in (tok.eos_id, tok.token_id(END_TAG)):
            break
        reply.append(next_id)
        logits = model.forward([next_id], kv_cache=cache, start_pos=0).numpy()[-1]  # the bug
    return chat_decode(tok, reply).strip()


def chat_loop(
    model: GPTModel, tok: BPETokenizer, stdin: TextIO, stdout: TextIO, rng: np.random.Generator
) -> int:
    turns = 0
    while True:
        stdout.write("> ")
        line = stdin.readline()
        if not line or line.strip() == "/quit":
            return turns
        if line.strip():
            stdout.write(f"Bot: {chat_one_turn(model, tok, line.strip(), MAX_NEW_TOKENS, rng)}\n")
            turns += 1
