"""Mutant: the loop over the ids stops one short (range(len(token_ids) - 1))."""

# zh: 遍历 id 的循环少走一步（range(len(token_ids) - 1)）
# fails: decode_text, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from collections.abc import Sequence

from framework.bpe_tokenizer import BPETokenizer


def chat_decode(tok: BPETokenizer, token_ids: Sequence[int]) -> str:
    data = b"".join(tok.token_bytes(token_ids[i]) for i in range(len(token_ids) - 1))
    return data.decode("utf-8", errors="replace")
