"""Mutant: turns any input into a str first, so chat_tokenize(tok, 42) encodes "42"."""

# zh: 先把任何输入都变成 str，于是 chat_tokenize(tok, 42) 编码了 "42"
# fails: tokenize_prompt, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import format_prompt


def chat_tokenize(tok: BPETokenizer, user_input: str) -> list[int]:
    return tok.encode(format_prompt([("user", str(user_input))]), add_bos=True)
