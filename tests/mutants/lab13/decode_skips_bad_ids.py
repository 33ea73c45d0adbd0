"""Mutant: silently drops ids outside the vocabulary (what the C bpe_decode did)."""

# zh: 悄悄丢掉词表以外的 id（C 版 bpe_decode 的做法）
# fails: decode_text, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from collections.abc import Sequence

from framework.bpe_tokenizer import BPETokenizer


def chat_decode(tok: BPETokenizer, token_ids: Sequence[int]) -> str:
    return tok.decode([i for i in token_ids if 0 <= i < tok.vocab_size])
