"""Mutant: decode_id treats id 4 (the NUL byte) as a special: token_id <= 4 gives None."""

# zh: decode_id 把 id 4（NUL 字节）当成特殊 token（写成 <= 4）
# fails: decode_known, decode_all_ids, roundtrip_edge, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def decode_id(tok: ByteTokenizer, token_id: int) -> int | None:
    """The byte value of an ordinary id, or None for PAD/UNK/BOS/EOS."""
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"token_id must be an int, got {type(token_id).__name__} {token_id!r}")
    if not 0 <= token_id < tok.vocab_size:
        raise ValueError(f"token_id must be in [0, {tok.vocab_size}), got {token_id}")
    if token_id <= NUM_SPECIAL:
        return None
    return token_id - NUM_SPECIAL
