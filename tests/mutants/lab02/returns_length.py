"""Mutant: roundtrip returns (len(ids), text), like the C version that returned the length."""

# zh: roundtrip 返回 (len(ids), text)，像 C 版本返回长度
# fails: roundtrip_ascii, roundtrip_unicode, roundtrip_edge, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]
    values = [decode_id(tok, i) for i in ids]
    data = bytes(v for v in values if v is not None)  # `if v` would drop the NUL byte
    return len(ids), data.decode("utf-8")
