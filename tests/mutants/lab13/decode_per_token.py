"""Mutant: decodes id by id and joins the pieces (a character split over ids becomes U+FFFD)."""

# zh: 一个 id 一个 id 地解码再拼接（跨 id 的字符变成 U+FFFD）
# fails: decode_text, one_turn_replies, one_turn_cache, one_turn_limit, one_turn_stop, one_turn_known_ids, one_turn_truncate, loop_quit, loop_eof

from collections.abc import Sequence

from framework.bpe_tokenizer import BPETokenizer


def chat_decode(tok: BPETokenizer, token_ids: Sequence[int]) -> str:
    return "".join(tok.decode([i]) for i in token_ids)
