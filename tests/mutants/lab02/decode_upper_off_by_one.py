"""Mutant: decode_id checks token_id <= vocab_size, so id 260 is accepted."""

# zh: decode_id 的上界写成 <= vocab_size，id 260 被接受
# fails: decode_errors

from framework.tokenizer import ByteTokenizer


def decode_id(tok: ByteTokenizer, token_id: int) -> int | None:
    """The byte value of an ordinary id, or None for PAD/UNK/BOS/EOS."""
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"token_id must be an int, got {type(token_id).__name__} {token_id!r}")
    if not 0 <= token_id <= tok.vocab_size:
        raise ValueError(f"token_id must be in [0, {tok.vocab_size}), got {token_id}")
    if token_id < NUM_SPECIAL:
        return None
    return token_id - NUM_SPECIAL
