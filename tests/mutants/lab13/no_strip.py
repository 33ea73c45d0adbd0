"""Mutant: the reply keeps the newline the model writes before <|end|>."""

# zh: 回复保留了模型在 <|end|> 之前写的换行
# fails: one_turn_replies, one_turn_limit, one_turn_stop, one_turn_truncate, loop_quit, loop_eof

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import END_TAG
from framework.kv_cache import KVCache
from framework.model import GPTModel
from framework.sampling import sample_top_k


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
    if not isinstance(max_new_tokens, int) or not 0 <= max_new_tokens < c.max_seq_len:
        raise ValueError(f"max_new_tokens must be in [0, {c.max_seq_len}), got {max_new_tokens}")
    ids = chat_tokenize(tok, user_input)[-(c.max_seq_len - max_new_tokens) :]
    known = np.zeros(c.vocab_size, dtype=bool)
    known[[i for i in tok.known_ids() if i < c.vocab_size]] = True
    stop = {tok.eos_id, tok.token_id(END_TAG)}
    cache = KVCache(c.num_layers, c.max_seq_len, c.hidden_dim)
    logits = model.forward(ids, kv_cache=cache, start_pos=0).numpy()[-1]
    position, reply = len(ids), []
    for _ in range(max_new_tokens):
        next_id = sample_top_k(np.where(known, logits, -np.inf), top_k, temperature, rng)
        if next_id in stop:
            break
        reply.append(next_id)
        if len(reply) < max_new_tokens:
            logits = model.forward([next_id], kv_cache=cache, start_pos=position).numpy()[-1]
            position += 1
    return chat_decode(tok, reply)
