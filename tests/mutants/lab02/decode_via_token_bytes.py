"""Mutant: decode_id asks the tokenizer for the id's bytes instead of computing them."""

# zh: decode_id 向 tokenizer 要字节，没有自己算
# fails: decode_known, decode_all_ids, roundtrip_ascii, roundtrip_unicode, roundtrip_edge, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def decode_id(tok: ByteTokenizer, token_id: int) -> int | None:
    """The byte value of an ordinary id, or None for PAD/UNK/BOS/EOS."""
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"token_id must be an int, got {type(token_id).__name__} {token_id!r}")
    if not 0 <= token_id < tok.vocab_size:
        raise ValueError(f"token_id must be in [0, {tok.vocab_size}), got {token_id}")
    return None if tok.is_special(token_id) else tok.token_bytes(token_id)[0]
