"""Mutant: roundtrip encodes each character with ord() instead of each UTF-8 byte.

ASCII works; '你' is ord 20320, which encode_byte rightly refuses.
"""

# zh: roundtrip 对每个字符用 ord() 编码，而不是对每个 UTF-8 字节
# fails: roundtrip_unicode, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = [encode_byte(tok, ord(c)) for c in text]
    values = [decode_id(tok, i) for i in ids]
    return ids, "".join(chr(v) for v in values if v is not None)
