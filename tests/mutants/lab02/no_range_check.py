"""Mutant: neither encode_byte nor decode_id checks the range: -1, 256 and 260 slip through."""

# zh: encode_byte 和 decode_id 都没有检查范围
# fails: encode_errors, decode_errors

from framework.tokenizer import ByteTokenizer


def encode_byte(tok: ByteTokenizer, b: int) -> int:
    """The id of byte value b (0-255): b + 4."""
    if isinstance(b, bool) or not isinstance(b, int):
        raise TypeError(f"b must be an int, got {type(b).__name__} {b!r}")
    return b + NUM_SPECIAL


def decode_id(tok: ByteTokenizer, token_id: int) -> int | None:
    """The byte value of an ordinary id, or None for PAD/UNK/BOS/EOS."""
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"token_id must be an int, got {type(token_id).__name__} {token_id!r}")
    if token_id < NUM_SPECIAL:
        return None
    return token_id - NUM_SPECIAL
