"""Mutant: EOS after the prompt, as if the sequence were finished (the C TODO's add_eos=1)."""

# zh: 提示词后面加了 EOS，好像序列已经写完了（C 版 TODO 的 add_eos=1）
# fails: tokenize_prompt, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import format_prompt


def chat_tokenize(tok: BPETokenizer, user_input: str) -> list[int]:
    return tok.encode(format_prompt([("user", user_input)]), add_bos=True, add_eos=True)
