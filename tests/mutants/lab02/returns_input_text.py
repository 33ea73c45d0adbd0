"""roundtrip encodes with encode_byte but hands back its input instead of decoding."""

# caught-by: roundtrip_own


from __future__ import annotations

from framework.tokenizer import ByteTokenizer

NUM_SPECIAL = 4  # ids 0-3 are PAD, UNK, BOS, EOS; byte b is id b + 4


def encode_byte(tok: ByteTokenizer, b: int) -> int:
    """The id of byte value b (0-255): b + 4."""
    if isinstance(b, bool) or not isinstance(b, int):
        raise TypeError(f"b must be an int, got {type(b).__name__} {b!r}")
    if not 0 <= b <= 255:
        raise ValueError(f"b must be a byte value in [0, 255], got {b}")
    return b + NUM_SPECIAL


def decode_id(tok: ByteTokenizer, token_id: int) -> int | None:
    """The byte value of an ordinary id, or None for PAD/UNK/BOS/EOS."""
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"token_id must be an int, got {type(token_id).__name__} {token_id!r}")
    if not 0 <= token_id < tok.vocab_size:
        raise ValueError(f"token_id must be in [0, {tok.vocab_size}), got {token_id}")
    if token_id < NUM_SPECIAL:
        return None
    return token_id - NUM_SPECIAL


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]
    return ids, text
