"""Mutant: no check of max_new_tokens (and ids[-0:] keeps the whole prompt)."""

# zh: 不检查 max_new_tokens（而 ids[-0:] 留下了整个提示词）
# fails: one_turn_limit

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
    return chat_decode(tok, reply).strip()
