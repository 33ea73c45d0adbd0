"""Mutant: consumes the caller's list with pop(0) while decoding it."""

# zh: 解码时用 pop(0) 把调用者的列表一个个取空了
# fails: decode_text, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from collections.abc import Sequence

from framework.bpe_tokenizer import BPETokenizer


def chat_decode(tok: BPETokenizer, token_ids: Sequence[int]) -> str:
    data = b""
    while token_ids:
        data += tok.token_bytes(token_ids.pop(0))  # type: ignore[attr-defined]
    return data.decode("utf-8", errors="replace")
