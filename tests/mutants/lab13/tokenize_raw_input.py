"""Mutant: BOS + the user's text alone, without the chat tags (the C course's chat_bpe)."""

# zh: 只有 BOS 加上用户的原文，没有对话标签（C 版的 chat_bpe）
# fails: tokenize_prompt, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from framework.bpe_tokenizer import BPETokenizer


def chat_tokenize(tok: BPETokenizer, user_input: str) -> list[int]:
    return tok.encode(user_input, add_bos=True)
