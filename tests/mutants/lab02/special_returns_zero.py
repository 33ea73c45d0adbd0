"""Mutant: decode_id returns 0 for a special id (the C version's '\\0') instead of None."""

# zh: decode_id 对特殊 id 返回 0（像 C 里的 '\0'），不是 None
# fails: decode_all_ids, roundtrip_random

from framework.tokenizer import ByteTokenizer


def decode_id(tok: ByteTokenizer, token_id: int) -> int | None:
    """The byte value of an ordinary id, or None for PAD/UNK/BOS/EOS."""
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"token_id must be an int, got {type(token_id).__name__} {token_id!r}")
    if not 0 <= token_id < tok.vocab_size:
        raise ValueError(f"token_id must be in [0, {tok.vocab_size}), got {token_id}")
    if token_id < NUM_SPECIAL:
        return 0
    return token_id - NUM_SPECIAL
