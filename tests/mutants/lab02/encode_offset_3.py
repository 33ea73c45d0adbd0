"""Mutant: encode_byte returns b + 3: counts 3 specials (ids 0-3 are four)."""

# zh: encode_byte 返回 b + 3：只算了 3 个特殊 token（其实有 4 个）
# fails: encode_known, encode_all_bytes, roundtrip_ascii, roundtrip_unicode, roundtrip_edge, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def encode_byte(tok: ByteTokenizer, b: int) -> int:
    """The id of byte value b (0-255): b + 4."""
    if isinstance(b, bool) or not isinstance(b, int):
        raise TypeError(f"b must be an int, got {type(b).__name__} {b!r}")
    if not 0 <= b <= 255:
        raise ValueError(f"b must be a byte value in [0, 255], got {b}")
    return b + 3
