"""Mutant: encode_byte sends bytes 128-255 to UNK (the C version's signed-char `c < 0` rule)."""

# zh: encode_byte 把 128–255 的字节当成 UNK（像 C 里 signed char 的 c < 0）
# fails: encode_known, encode_all_bytes, roundtrip_unicode, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def encode_byte(tok: ByteTokenizer, b: int) -> int:
    """The id of byte value b (0-255): b + 4."""
    if isinstance(b, bool) or not isinstance(b, int):
        raise TypeError(f"b must be an int, got {type(b).__name__} {b!r}")
    if not 0 <= b <= 255:
        raise ValueError(f"b must be a byte value in [0, 255], got {b}")
    if b > 127:
        return tok.unk_id
    return b + NUM_SPECIAL
