"""Mutant: encode_byte also takes a one-character str (the C version's encode_char) via ord()."""

# zh: encode_byte 也接受单字符 str（用 ord() 转换），没有 raise TypeError
# fails: encode_errors

from framework.tokenizer import ByteTokenizer


def encode_byte(tok: ByteTokenizer, b: int) -> int:
    """The id of byte value b (0-255): b + 4."""
    if isinstance(b, str) and len(b) == 1:
        b = ord(b)
    if isinstance(b, bool) or not isinstance(b, int):
        raise TypeError(f"b must be an int, got {type(b).__name__} {b!r}")
    if not 0 <= b <= 255:
        raise ValueError(f"b must be a byte value in [0, 255], got {b}")
    return b + NUM_SPECIAL
