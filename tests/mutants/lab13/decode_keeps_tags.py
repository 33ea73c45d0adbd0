"""Mutant: the chat tags are kept as text in the decoded reply."""

# zh: 解码后的回复里保留了对话标签的文字
# fails: decode_text, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from collections.abc import Sequence

from framework.bpe_tokenizer import BPETokenizer


def chat_decode(tok: BPETokenizer, token_ids: Sequence[int]) -> str:
    return tok.decode(token_ids, keep_tags=True)
