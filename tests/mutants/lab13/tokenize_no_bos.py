"""Mutant: the prompt is encoded without BOS (the model was trained with one)."""

# zh: 编码提示词时没有加 BOS（模型训练时是有的）
# fails: tokenize_prompt, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import format_prompt


def chat_tokenize(tok: BPETokenizer, user_input: str) -> list[int]:
    return tok.encode(format_prompt([("user", user_input)]))
