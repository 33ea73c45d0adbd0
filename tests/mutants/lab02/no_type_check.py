"""Mutant: encode_byte has no type check: a float 65.0 comes back as 69.0."""

# zh: encode_byte 没有检查类型：浮点数 65.0 得到 69.0
# fails: encode_errors

from framework.tokenizer import ByteTokenizer


def encode_byte(tok: ByteTokenizer, b: int) -> int:
    """The id of byte value b (0-255): b + 4."""
    if not 0 <= b <= 255:
        raise ValueError(f"b must be a byte value in [0, 255], got {b}")
    return b + NUM_SPECIAL
