"""Mutant: hands the whole reply to framework.generate instead of writing the loop."""

# zh: 把整个回复交给 framework.generate，没有自己写生成循环
# fails: one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import END_TAG
from framework.generate import GenerateConfig, generate
from framework.model import GPTModel


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
    cfg = GenerateConfig(max_new_tokens=max_new_tokens, temperature=temperature, top_k=top_k,
                         top_p=1.0, stop_ids=(tok.token_id(END_TAG),))
    return tok.decode(generate(model, tok, ids, cfg, rng).token_ids).strip()
